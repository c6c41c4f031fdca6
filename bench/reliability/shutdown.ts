/**
 * Graceful shutdown: SIGTERM to a busy flow, the time until the process has
 * exited, and whether every event the source emitted reached the file.
 *
 * The flow: a blaster at full speed sends `{"id":1}`, `{"id":2}`, ... to
 * two pipelines. One batches (`generic::batch`, 50 events or 1 s) into a
 * file offramp: the path under test, with events held in a batch and in
 * the file's write buffer when the signal comes. The other passes every
 * event straight to `system::stdout`, which this script reads: the
 * witness of what the source emitted (standard output to a pipe is written
 * synchronously by Node, so nothing the witness got is still buffered in
 * the child when it exits). The signal is sent once the file holds a
 * given number of lines, a different number per run.
 *
 * Per run: lost = ids the witness saw that are not in the file;
 * duplicated = lines beyond the first of an id; the witness's own ids must
 * be 1..max without a gap (the source emits in order).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IdTally, LineCounter, NewLines, envNumber, exitWithin, fill, startEddy, tempDir, waitFor, writeIdFile } from './common';

export interface ShutdownRun {
  run: number;
  /** the file's line count that triggered the signal */
  signalAt: number;
  /** milliseconds from SIGTERM to the process's exit */
  exitMs: number;
  exitCode: number | null;
  /** events the source emitted (the witness's count) */
  emitted: number;
  /** gaps in the witness's ids (should be 0) */
  witnessGaps: number;
  fileLines: number;
  lost: number;
  duplicated: number;
  /** ids in the file the witness never saw (should be 0) */
  unknown: number;
  /** the source had sent everything before the signal: nothing was in flight */
  sourceFinished: boolean;
}

export interface ShutdownResult {
  runs: ShutdownRun[];
  batch: { count: number; timeoutMs: number };
  sourceEvents: number;
}

const CONFIG = `onramp:
  - id: source
    type: blaster
    codec: json
    config: { source: "\${IDS}", iters: \${N} }
offramp:
  - id: sink
    type: file
    codec: json
    config: { file: "\${OUT}" }
pipeline:
  - id: batched
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - { id: batch, type: "generic::batch", config: { count: \${BATCH}, timeout: \${TIMEOUT} } }
    links: { in: [batch], batch: [out] }
binding:
  - id: flow
    links:
      "/onramp/source/{instance}/out": ["/pipeline/batched/{instance}/in", "/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/batched/{instance}/out": ["/offramp/sink/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/system::stdout/system/in"]
mapping:
  /binding/flow/main: { instance: main }
`;

export async function runShutdown(log: (line: string) => void): Promise<ShutdownResult> {
  const runs = envNumber('RELIABILITY_SHUTDOWN_RUNS', 5, 1);
  const step = envNumber('RELIABILITY_SHUTDOWN_STEP', 20000, 1);
  const sourceEvents = Math.max(step * runs * 3, 100000);
  const batch = { count: 50, timeoutMs: 1000 };
  const tmp = tempDir('shutdown');
  try {
    const ids = join(tmp.path, 'ids.json');
    writeIdFile(ids, sourceEvents);
    const result: ShutdownResult = { runs: [], batch, sourceEvents };
    for (let run = 1; run <= runs; run++) {
      const out = join(tmp.path, `out-${run}.json`);
      const config = join(tmp.path, `flow-${run}.yaml`);
      writeFileSync(config, fill(CONFIG, { IDS: ids, N: sourceEvents, OUT: out, BATCH: batch.count, TIMEOUT: batch.timeoutMs }));
      const r = await oneRun(run, config, out, step * run, sourceEvents);
      log(
        `shutdown run ${run}/${runs}: SIGTERM at ${r.signalAt} lines, exit ${r.exitCode} after ${r.exitMs.toFixed(0)} ms, emitted ${r.emitted}, in the file ${r.fileLines}, lost ${r.lost}, duplicated ${r.duplicated}`,
      );
      result.runs.push(r);
    }
    return result;
  } finally {
    tmp.remove();
  }
}

async function oneRun(run: number, config: string, out: string, signalAt: number, sourceEvents: number): Promise<ShutdownRun> {
  const witness = new IdTally(sourceEvents);
  const proc = startEddy(['server', 'run', '-f', config, '--api-port', '0'], (line) => witness.add([line]));
  const counter = new LineCounter(out);
  let exitMs: number;
  let exitCode: number | null;
  try {
    await waitFor(() => counter.lines() >= signalAt || proc.exit !== undefined, 300000, `${signalAt} lines in the file`, 1);
    if (proc.exit) throw new Error(`the flow exited before the signal: ${proc.stderrTail()}`);
    const signalled = performance.now();
    proc.child.kill('SIGTERM');
    exitCode = (await exitWithin(proc, 60000, 'the flow after SIGTERM')).code;
    exitMs = performance.now() - signalled;
  } finally {
    await proc.kill();
  }
  const file = new IdTally(sourceEvents);
  file.add(new NewLines(out).read());
  const emitted = witness.maxId();
  let lost = 0;
  let unknown = 0;
  for (let id = 1; id <= sourceEvents; id++) {
    if (witness.seen[id] > 0 && file.seen[id] === 0) lost++;
    if (witness.seen[id] === 0 && file.seen[id] > 0) unknown++;
  }
  return {
    run,
    signalAt,
    exitMs,
    exitCode,
    emitted,
    witnessGaps: witness.missing(emitted).length,
    fileLines: file.lines,
    lost,
    duplicated: file.duplicated,
    unknown,
    sourceFinished: emitted >= sourceEvents,
  };
}
