// Our published .d.ts use Node's types (Buffer, NodeJS.*, node:http...). This makes any program that
// imports eddy load @types/node even when its tsconfig does not list it (TypeScript 6+ includes no @types
// by default); preserve="true" keeps the directive in the emitted index.d.ts. See docs/embedding.md, "Types".
/// <reference types="node" preserve="true" />
/**
 * eddy/testing: marble tests for pipelines, in virtual time.
 *
 * ```ts
 * import { expectPipeline } from 'eddy/testing';
 *
 * it('batches two by two', () =>
 *   expectPipeline({
 *     name: 'batches two by two',
 *     pipeline: 'pipelines/batch.yaml',
 *     values: { a: 1, b: 2 },
 *     events: { x: { batch: [1, 2] } },
 *     in: { in: '-a-b-|' },
 *     out: { out: '---x-|' },
 *   }));
 * ```
 *
 * The same cases in YAML files run with `eddy test FILE...`.
 */
import { checkCase, readCases, resolvePipeline, type Case, type CaseFile, type FlowCase, type ReadCase } from './cases';
import { formatCase } from './format';
import { runCase, type CaseResult, type RunOptions } from './run';
import { runFlowCase } from './flow';

export type { Case, CaseFile, EventSpec, FlowCase, FlowSpec, InsightMarbles, InsightSpec, PipelineCase, ReadCase } from './cases';
export type { BytesResult, CaseResult, Frame, PortResult, RunOptions } from './run';
export { readCaseFile, readCases } from './cases';
export { drawMarbles, formatCase } from './format';

/** The outcome of one case file. */
export interface FileResult {
  path: string;
  passed: boolean;
  cases: CaseResult[];
  /** an error that kept the file from running at all (unreadable, not a case file) */
  error?: string;
}

/**
 * Runs one case, marbles or a flow. `pipeline` is an artefact object, its
 * YAML/JSON text, or a path (relative to the working directory) to a
 * pipeline or config file.
 */
export function testPipeline(c: Case, options: RunOptions = {}): CaseResult {
  try {
    checkCase(c);
    const file: CaseFile = { cases: [c] };
    return 'flow' in c ? runFlowCase(c, flowPipelines(file, c), options) : runCase(c, resolvePipeline(file, c), options);
  } catch (err) {
    // checkCase threw: the case may be anything a file holds, null included
    const name = (c as Partial<Case> | null | undefined)?.name;
    return { name: typeof name === 'string' ? name : '(unnamed case)', passed: false, ports: [], error: (err as Error).message };
  }
}

/** Runs one case and throws an Error carrying the drawn report when it fails: for mocha, jest or node:test. */
export function expectPipeline(c: Case, options: RunOptions = {}): void {
  const result = testPipeline(c, options);
  if (!result.passed) throw new Error(`pipeline case failed\n${formatCase(result)}`);
}

/**
 * Runs every case of a case file. A malformed case fails alone, with the
 * error naming it and the field, and the other cases still run; a file that
 * cannot be read, or whose own fields are wrong, is one failure.
 */
export function runCaseFile(path: string, options: RunOptions = {}): FileResult {
  let read: { file: CaseFile; entries: ReadCase[] };
  try {
    read = readCases(path);
  } catch (err) {
    return { path, passed: false, cases: [], error: (err as Error).message };
  }
  const { file, entries } = read;
  const cases = entries.map((entry): CaseResult => {
    if ('error' in entry) return { name: entry.name, passed: false, ports: [], error: entry.error };
    const c = entry.case;
    try {
      if ('flow' in c) return runFlowCase(c, flowPipelines(file, c), options);
      return runCase(c, resolvePipeline(file, c), options);
    } catch (err) {
      return { name: c.name, passed: false, ports: [], error: (err as Error).message };
    }
  });
  return { path, passed: cases.every((c) => c.passed), cases };
}

/** The pipelines a flow case runs: those `via` names in its config file, chained, else the case's pipeline. */
function flowPipelines(file: CaseFile, c: FlowCase): unknown[] {
  return c.flow.via ? c.flow.via.map((id) => resolvePipeline(file, { ...c, id })) : [resolvePipeline(file, c)];
}
