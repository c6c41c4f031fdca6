import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EDDY, runEddy } from '../../helpers/cli';

/**
 * One kill -9 run of `blaster -> qos::wal -> file`, as the delivery test and
 * anyone measuring it (a reliability report) run it:
 *
 * 1. A child eddy replays ids 1..total from a blaster through a WAL into
 *    `out-1.json`; once that file holds `killAfterLines` complete lines the
 *    child is killed with SIGKILL (the point is chosen by watching the file,
 *    not by time).
 * 2. A second child on the same WAL directory, without the blaster, replays
 *    what the WAL still holds into `out-2.json`. A file onramp sends it one
 *    sentinel event after that: the WAL passes events on in the order it
 *    stored them, so once the sentinel is in the file the replay is complete,
 *    and the child is stopped with SIGTERM.
 *
 * The WAL stores a prefix of what the blaster sent (it appends in order) and
 * nothing the blaster sent after the kill, so every id from 1 to the highest
 * one seen must be in one of the two files: an id missing there was acked
 * by the file offramp before it was written, and then dropped by the WAL.
 */
export interface KillRunOptions {
  /** a fresh directory for the run's files and the WAL */
  dir: string;
  /** events the blaster sends */
  total: number;
  /** complete lines in the first output at which the first child is killed */
  killAfterLines: number;
  /** the WAL's read_count: a small one keeps a backlog in the WAL */
  readCount?: number;
  /** the file offramp's fsync option */
  fsync?: boolean;
  /** bounds a hang only: a slow machine waits longer, the outcome is the same */
  timeoutMs?: number;
}

export interface KillRunResult {
  /** complete lines in the first output, read after the kill */
  linesBeforeKill: number;
  /** lines the replay wrote (without the sentinel) */
  linesReplayed: number;
  /** the highest id seen: every id up to it was stored by the WAL */
  highestId: number;
  /** ids up to `highestId` in neither file */
  lost: number[];
  /** ids written more than once (written, then replayed because the kill came before the WAL heard the ack) */
  duplicated: number;
  /** ids the replay wrote above the first run's highest: the WAL held a backlog, so a lost ack would have shown */
  backlog: number;
  /** how the first child ended (SIGKILL), and the second child's exit status */
  firstSignal: NodeJS.Signals | null;
  secondCode: number | null;
  secondStderr: string;
}

const completeLines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1) : []);
const countLines = (file: string): number => {
  if (!existsSync(file)) return 0;
  const text = readFileSync(file);
  let n = 0;
  for (const byte of text) if (byte === 0x0a) n++;
  return n;
};
const idOf = (line: string): number => (JSON.parse(line) as { id: number }).id;

export async function walFileKillRun(options: KillRunOptions): Promise<KillRunResult> {
  const { dir, total, killAfterLines } = options;
  const readCount = options.readCount ?? 16;
  const timeoutMs = options.timeoutMs ?? 60000;
  const walDir = join(dir, 'wal');
  const input = join(dir, 'in.json');
  const sentinelInput = join(dir, 'sentinel.json');
  const [out1, out2] = [join(dir, 'out-1.json'), join(dir, 'out-2.json')];
  const sentinel = total + 1;
  writeFileSync(input, Array.from({ length: total }, (_, i) => `{"id":${i + 1}}\n`).join(''));
  writeFileSync(sentinelInput, `{"id":${sentinel}}\n`);

  const config = (onramp: string, out: string) => `onramp:
${onramp}
pipeline:
  - id: durable
    interface: { inputs: [in], outputs: [out] }
    nodes:
      - id: wal
        type: qos::wal
        config: { read_count: ${readCount}, max_elements: ${total + 10}, dir: "${walDir}" }
    links: { in: [wal], wal: [out] }
offramp:
  - id: sink
    type: file
    config: { file: "${out}", fsync: ${options.fsync === true} }
binding:
  - id: flow
    links:
      "/onramp/source/{instance}/out": ["/pipeline/durable/{instance}/in"]
      "/pipeline/durable/{instance}/out": ["/offramp/sink/{instance}/in"]
mapping:
  /binding/flow/main: { instance: main }
`;
  const first = join(dir, 'first.yaml');
  const second = join(dir, 'second.yaml');
  writeFileSync(first, config(`  - id: source\n    type: blaster\n    config: { source: "${input}", iters: ${total} }`, out1));
  writeFileSync(second, config(`  - id: source\n    type: file\n    config: { source: "${sentinelInput}" }`, out2));

  // 1. blast and kill -9 once the file holds enough lines; the API on an ephemeral port keeps the process alive
  const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', first, '--api-port', '0'], {
    env: { ...process.env, EDDY_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  let childGone = false;
  void exited.then(() => (childGone = true));
  const deadline = Date.now() + timeoutMs;
  while (!childGone && countLines(out1) < killAfterLines) {
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the first run did not write ${killAfterLines} lines within ${timeoutMs} ms (stderr: ${stderr})`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  child.kill('SIGKILL');
  const firstSignal = await exited;
  if (firstSignal !== 'SIGKILL') throw new Error(`the first run ended by itself before the kill (stderr: ${stderr})`);
  const ids1 = completeLines(out1).map(idOf);

  // 2. replay what the WAL holds, until the sentinel comes through
  const run = await runEddy(['server', 'run', '-f', second, '--api-port', '0'], {
    timeoutMs,
    signalWhen: () => completeLines(out2).includes(`{"id":${sentinel}}`),
  });
  const lines2 = completeLines(out2);
  if (lines2[lines2.length - 1] !== `{"id":${sentinel}}`) throw new Error(`the replay did not end with the sentinel (exit ${run.code}; stderr: ${run.stderr})`);
  const ids2 = lines2.slice(0, -1).map(idOf);

  const seen = new Map<number, number>();
  for (const id of [...ids1, ...ids2]) seen.set(id, (seen.get(id) ?? 0) + 1);
  const highestId = Math.max(0, ...seen.keys());
  const lost: number[] = [];
  for (let id = 1; id <= highestId; id++) if (!seen.has(id)) lost.push(id);
  const highestFirst = Math.max(0, ...ids1);
  return {
    linesBeforeKill: ids1.length,
    linesReplayed: ids2.length,
    highestId,
    lost,
    duplicated: [...seen.values()].filter((n) => n > 1).length,
    backlog: ids2.filter((id) => id > highestFirst).length,
    firstSignal,
    secondCode: run.code,
    secondStderr: run.stderr,
  };
}
