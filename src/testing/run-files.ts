import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Registries } from '../runtime/registries';
import { formatCase } from './format';
import type { FileResult } from './index';

/** What `eddy test` runs (its flags: src/cli/test.ts). */
export interface TestRun {
  /** case files, in order */
  files: string[];
  /** modules that register an application's own types (`register(registries)`) */
  modules: string[];
  reporter: 'spec' | 'json';
}

/**
 * `eddy test`: runs case files and prints a report. Exit status 0 when every
 * case passes, 1 when any fails (or a file or a `--require` module cannot be
 * used: an Error naming it).
 */
export async function runCaseFiles({ files, modules, reporter }: TestRun, out: (text: string) => void): Promise<number> {
  const registries = modules.length > 0 ? await registriesWith(modules) : undefined;
  // required here: `eddy server run` imports this module (through the command table) and should not load the test runner
  const { runCaseFile } = require('./index') as typeof import('./index'); // eslint-disable-line @typescript-eslint/no-require-imports -- see above: loaded only when cases run
  const results = files.map((f) => runCaseFile(f, { registries }));
  out(reporter === 'json' ? `${JSON.stringify(jsonReport(results), null, 2)}\n` : specReport(results));
  return results.every((r) => r.passed) ? 0 : 1;
}

/**
 * Node's own dynamic import, which loads CommonJS and ES modules alike. (The
 * compiler turns a literal `import()` into `require()` in this CommonJS
 * build, which cannot load an ES module.)
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- see above: a real import(), which the CommonJS build would turn into require()
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
      (register as (registries: Registries) => void)(registries);
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
        failures: [
          ...c.ports.filter((p) => p.firstDifference !== -1).map((p) => ({ port: p.port, report: formatCase({ ...c, ports: [p], bytes: undefined }, '') })),
          // a flow case's bytes, under the name its report gives them
          ...(c.bytes && c.bytes.firstDifference !== -1 ? [{ port: 'bytes', report: formatCase({ ...c, ports: [] }, '') }] : []),
        ],
      })),
    })),
  };
}
