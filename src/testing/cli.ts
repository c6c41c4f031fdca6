import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Registries } from '../runtime/registries';
import { formatCase } from './format';
import type { FileResult } from './index';

export const TEST_USAGE = 'eddy test [--reporter spec|json] [--require MODULE ...] CASES.yaml ...';

/** A usage error: the command prints the usage line and exits 2. */
export class UsageError extends Error {}

/**
 * `eddy test`: runs case files and prints a report. Exit status 0 when every
 * case passes, 1 when any fails (or a file or a `--require` module cannot be
 * used), 2 on bad usage (a UsageError).
 */
export async function testCommand(args: string[], out: (text: string) => void): Promise<number> {
  let reporter = 'spec';
  const files: string[] = [];
  const modules: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--reporter') {
      reporter = args[++i] ?? '';
      if (reporter !== 'spec' && reporter !== 'json') throw new UsageError(`--reporter: '${reporter}' is not a reporter (spec, json)`);
    } else if (arg === '--require') {
      const module = args[++i];
      if (module === undefined) throw new UsageError('--require: name a module');
      modules.push(module);
    } else if (arg.startsWith('-')) throw new UsageError(`unknown argument '${arg}'`);
    else files.push(arg);
  }
  if (files.length === 0) throw new UsageError('name at least one case file');
  const registries = modules.length > 0 ? await registriesWith(modules) : undefined;
  // required here: `eddy server run` imports this module for TEST_USAGE and should not load the test runner
  const { runCaseFile } = require('./index') as typeof import('./index'); // eslint-disable-line @typescript-eslint/no-require-imports
  const results = files.map((f) => runCaseFile(f, { registries }));
  out(reporter === 'json' ? `${JSON.stringify(jsonReport(results), null, 2)}\n` : specReport(results));
  return results.every((r) => r.passed) ? 0 : 1;
}

/**
 * Node's own dynamic import, which loads CommonJS and ES modules alike. (The
 * compiler turns a literal `import()` into `require()` in this CommonJS
 * build, which cannot load an ES module.)
 */
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<never>;

/**
 * The built-in types plus an application's own: each module (a path, from
 * the working directory; CommonJS or ES module) exports `register(registries)`,
 * which registers its types (`registries.operators.register(name, type)`).
 */
async function registriesWith(modules: string[]): Promise<Registries> {
  const registries = Registries.withBuiltins();
  for (const module of modules) {
    let loaded: { register?: unknown; default?: { register?: unknown } };
    try {
      loaded = await importModule(pathToFileURL(resolve(module)).href);
    } catch (err) {
      throw new Error(`--require ${module}: cannot load it: ${(err as Error).message.split('\n')[0]}`);
    }
    const register = loaded.register ?? loaded.default?.register;
    if (typeof register !== 'function') throw new Error(`--require ${module}: it exports no register(registries) function`);
    try {
      register(registries);
    } catch (err) {
      throw new Error(`--require ${module}: register failed: ${(err as Error).message}`);
    }
  }
  return registries;
}

function counts(results: FileResult[]) {
  const cases = results.flatMap((r) => r.cases);
  const passed = cases.filter((c) => c.passed).length;
  return { passed, failed: cases.length - passed + results.filter((r) => r.error).length };
}

function specReport(results: FileResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(r.path);
    if (r.error) lines.push(`  ✗ ${r.error}`);
    for (const c of r.cases) lines.push(formatCase(c));
  }
  const { passed, failed } = counts(results);
  lines.push('', `${passed} passing, ${failed} failing`);
  return `${lines.join('\n')}\n`;
}

function jsonReport(results: FileResult[]) {
  return {
    ...counts(results),
    files: results.map((r) => ({
      path: r.path,
      passed: r.passed,
      ...(r.error ? { error: r.error } : {}),
      cases: r.cases.map((c) => ({
        name: c.name,
        passed: c.passed,
        ...(c.error ? { error: c.error } : {}),
        failures: c.ports.filter((p) => p.firstDifference !== -1).map((p) => ({ port: p.port, report: formatCase({ ...c, ports: [p] }, '') })),
      })),
    })),
  };
}
