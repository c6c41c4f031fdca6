/**
 * kill -9 runs: does `qos::wal` -> file offramp lose or repeat events when
 * the process is killed while it delivers?
 *
 * Each run has two steps, both `eddy server run -f <config> --api-port 0` (the API on an
 * ephemeral loopback port keeps the process alive once the source is done):
 *
 * 1. fill: a blaster sends the events `{"id":1}` .. `{"id":N}` into a
 *    pipeline whose only node is `qos::wal` (its own directory per run) and
 *    whose output is linked to nothing, so no event is ever acked and the
 *    WAL keeps all of them. The pipeline's metrics say when the WAL has
 *    sent (so written) N events; then the process is killed.
 * 2. deliver: the same pipeline on the same WAL directory, its output
 *    linked to a file offramp. The file is watched; once it holds K lines
 *    the process gets SIGKILL. K differs per run (N/5, 2N/5, ... for 4 runs).
 *    The file is kept aside, the same config is started again and runs
 *    until the ids in both files together are 1..N, or until nothing has
 *    been written for a while (the WAL has nothing more to give), then it
 *    gets SIGTERM.
 *
 * Every event was in the WAL before the kill, so every id must arrive;
 * lost = ids that never did, duplicated = lines beyond the first of an id
 * (at-least-once delivery allows them: events written but not yet acked
 * when the process died are replayed).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IdTally, LineCounter, MetricsReader, NewLines, envNumber, exitWithin, fill, ranges, sleep, startEddy, tempDir, waitFor, writeIdFile } from './common';

export interface Kill9Run {
  run: number;
  events: number;
  /** the line count that triggered the kill */
  killAt: number;
  /** lines in the file once the killed process was gone */
  linesAtKill: number;
  /** lines the restarted process wrote */
  replayed: number;
  distinct: number;
  lost: number;
  duplicated: number;
  /** the lost ids, as ranges */
  lostIds: string;
  /** the last id in the file of the killed process */
  lastIdBeforeKill: number;
  /** why the restarted process was stopped */
  restartEnded: 'complete' | 'quiet';
  fillSecs: number;
  restartSecs: number;
}

export interface Kill9Result {
  runs: Kill9Run[];
  events: number;
  quietMs: number;
}

const PIPELINE = `pipeline:
  - id: durable
    interface: { inputs: [in], outputs: [out] }
    metrics_interval_s: 1
    nodes:
      - id: wal
        type: qos::wal
        config: { read_count: 100, max_elements: \${MAX}, dir: "\${WAL}" }
    links: { in: [wal], wal: [out] }
`;

const FILL = `onramp:
  - id: source
    type: blaster
    codec: json
    config: { source: "\${IDS}", iters: \${N} }
${PIPELINE}binding:
  - id: fill
    links:
      "/onramp/source/{instance}/out": ["/pipeline/durable/{instance}/in"]
      "/pipeline/system::metrics/system/out": ["/offramp/system::stdout/system/in"]
mapping:
  /binding/fill/main: { instance: main }
`;

const DELIVER = `${PIPELINE}offramp:
  - id: sink
    type: file
    codec: json
    config: { file: "\${OUT}" }
binding:
  - id: deliver
    links:
      "/pipeline/durable/{instance}/out": ["/offramp/sink/{instance}/in"]
mapping:
  /binding/deliver/main: { instance: main }
`;

export async function runKill9(log: (line: string) => void): Promise<Kill9Result> {
  const runs = envNumber('RELIABILITY_KILL9_RUNS', 4, 1);
  const events = envNumber('RELIABILITY_KILL9_EVENTS', 100000, 10);
  const quietMs = envNumber('RELIABILITY_KILL9_QUIET_MS', 5000, 100);
  const tmp = tempDir('kill9');
  try {
    const ids = join(tmp.path, 'ids.json');
    writeIdFile(ids, events);
    const result: Kill9Result = { runs: [], events, quietMs };
    for (let run = 1; run <= runs; run++) {
      const r = await oneRun(tmp.path, ids, events, run, Math.round((events * run) / (runs + 1)), quietMs);
      log(`kill9 run ${run}/${runs}: killed at ${r.linesAtKill} lines (asked ${r.killAt}), replayed ${r.replayed}, lost ${r.lost}, duplicated ${r.duplicated}`);
      result.runs.push(r);
    }
    return result;
  } finally {
    tmp.remove();
  }
}

async function oneRun(dir: string, ids: string, events: number, run: number, killAt: number, quietMs: number): Promise<Kill9Run> {
  const wal = join(dir, `wal-${run}`);
  const out = join(dir, `out-${run}.json`);
  const vars = { IDS: ids, N: events, MAX: events + 1000, WAL: wal, OUT: out };
  const fillConfig = join(dir, `fill-${run}.yaml`);
  const deliverConfig = join(dir, `deliver-${run}.yaml`);
  writeFileSync(fillConfig, fill(FILL, vars));
  writeFileSync(deliverConfig, fill(DELIVER, vars));

  // 1. fill the WAL
  const fillStart = performance.now();
  const metrics = new MetricsReader();
  const filler = startEddy(['server', 'run', '-f', fillConfig, '--api-port', '0'], metrics.line);
  try {
    await waitFor(
      () => (metrics.get('/pipeline/durable/main|wal|output|out') ?? 0) >= events || filler.exit !== undefined,
      300000,
      `the WAL to have stored ${events} events`,
    );
    if (filler.exit) throw new Error(`the fill process exited early: ${filler.stderrTail()}`);
  } finally {
    await filler.kill();
  }
  const fillSecs = (performance.now() - fillStart) / 1000;

  // 2. deliver, killed at `killAt` lines
  const counter = new LineCounter(out);
  const deliverer = startEddy(['server', 'run', '-f', deliverConfig, '--api-port', '0']);
  try {
    await waitFor(() => counter.lines() >= killAt || deliverer.exit !== undefined, 300000, `${killAt} lines in the output`, 1);
  } finally {
    await deliverer.kill();
  }
  if (deliverer.exit?.signal !== 'SIGKILL') throw new Error(`the deliver process exited before the kill: ${deliverer.stderrTail()}`);
  const killed = join(dir, `out-${run}.killed.json`);
  renameSync(out, killed);
  const tally = new IdTally(events);
  tally.add(new NewLines(killed).read());
  const linesAtKill = tally.lines;
  const lastIdBeforeKill = tally.maxId();

  // 3. restart with the same config and WAL until every id is there or nothing more comes
  const restartStart = performance.now();
  const restarted = startEddy(['server', 'run', '-f', deliverConfig, '--api-port', '0']);
  const newLines = new NewLines(out);
  let replayed = 0;
  let lastGrowth = Date.now();
  let restartEnded: Kill9Run['restartEnded'] = 'quiet';
  try {
    for (;;) {
      const lines = newLines.read();
      if (lines.length > 0) {
        replayed += lines.length;
        tally.add(lines);
        lastGrowth = Date.now();
      }
      if (tally.distinct === events) {
        restartEnded = 'complete';
        break;
      }
      // before the first line the process may still be starting: a longer wait
      if (Date.now() - lastGrowth > (replayed === 0 ? Math.max(quietMs, 30000) : quietMs)) break;
      if (restarted.exit) throw new Error(`the restarted process exited: ${restarted.stderrTail()}`);
      await sleep(20);
    }
    restarted.child.kill('SIGTERM');
    await exitWithin(restarted, 30000, 'the restarted deliver process');
  } finally {
    await restarted.kill();
  }
  // what the graceful stop flushed
  const rest = newLines.read();
  replayed += rest.length;
  tally.add(rest);
  const missing = tally.missing();
  return {
    run,
    events,
    killAt,
    linesAtKill,
    replayed,
    distinct: tally.distinct,
    lost: missing.length,
    duplicated: tally.duplicated,
    lostIds: ranges(missing),
    lastIdBeforeKill,
    restartEnded,
    fillSecs,
    restartSecs: (performance.now() - restartStart) / 1000,
  };
}
