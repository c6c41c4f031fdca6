import { formatCase } from './format';
import type { FileResult } from './index';

export const TEST_USAGE = 'eddy test [--reporter spec|json] CASES.yaml ...';

/**
 * `eddy test`: runs case files and prints a report. Exit status 0 when every
 * case passes, 1 when any fails (or a file cannot be run), 2 on bad usage.
 */
export function testCommand(args: string[], out: (text: string) => void): number {
  let reporter = 'spec';
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--reporter') {
      reporter = args[++i] ?? '';
      if (reporter !== 'spec' && reporter !== 'json') throw new Error(`--reporter: '${reporter}' is not a reporter (spec, json)`);
    } else if (arg.startsWith('-')) throw new Error(`unknown argument '${arg}'`);
    else files.push(arg);
  }
  if (files.length === 0) throw new Error('name at least one case file');
  // required here: `eddy server run` imports this module for TEST_USAGE and should not load the test runner
  const { runCaseFile } = require('./index') as typeof import('./index'); // eslint-disable-line @typescript-eslint/no-require-imports
  const results = files.map((f) => runCaseFile(f));
  out(reporter === 'json' ? `${JSON.stringify(jsonReport(results), null, 2)}\n` : specReport(results));
  return results.every((r) => r.passed) ? 0 : 1;
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
