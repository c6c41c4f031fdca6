/**
 * Start-up time: from spawn to the first event line on stdout, for
 * `eddy server run -f bench/startup.yaml` (metronome every 1 ms ->
 * system::passthrough -> system::stdout), beside the floor of starting Node
 * itself (`node -e` printing one JSON line) in the same run.
 *
 * Each row is started BENCH_STARTUP_RUNS times (10), alternating with the
 * others so load from elsewhere on the machine falls on all of them alike.
 * Measured per start: wall time from just before spawn to the first line on
 * stdout; the child's CPU seconds (user + system, all threads) and its peak
 * RSS (VmHWM) read from /proc when that line arrives; then the child is
 * killed. /proc counts CPU in clock ticks, so CPU-s has 10 ms resolution.
 *
 * Every child, the floor included, starts without NODE_EXTRA_CA_CERTS: with
 * it, Node parses that certificate file before running any JS (~150 ms and
 * as many CPU-ms on a system bundle), which is the start-up of the machine,
 * not of eddy. When this process has it set, one more row starts the floor
 * with it, and a line says what it costs.
 *
 * `npm run bench -- startup`, or `node dist/bench/startup.js [RUNS]`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds } from './child';
import { REPO, envNumber } from './data';

export interface StartupSample {
  wallMs: number;
  cpuSeconds?: number;
  peakRssBytes?: number;
}

export interface StartupRow {
  name: string;
  command: string;
  samples: StartupSample[];
}

export interface StartupTarget {
  name: string;
  args: string[];
  /** variables set for this target only, on top of childEnv() */
  env?: Record<string, string>;
}

const CA_CERTS = 'NODE_EXTRA_CA_CERTS';
const FLOOR_ARGS = ['-e', 'console.log(JSON.stringify({ ready: true }))'];
const FLOOR_WITH_CA_CERTS = `node -e (floor) with ${CA_CERTS}`;

const CONFIG = join(REPO, 'bench', 'startup.yaml');

/**
 * What is started: the node floor, and eddy with and without its REST API;
 * last, when `env` has NODE_EXTRA_CA_CERTS, the floor with it.
 */
export function startupTargets(eddy = join(REPO, 'bin', 'eddy'), env: NodeJS.ProcessEnv = process.env): StartupTarget[] {
  const targets: StartupTarget[] = [
    { name: 'node -e (floor)', args: FLOOR_ARGS },
    { name: 'eddy --no-api', args: [eddy, 'server', 'run', '-f', CONFIG, '--no-api'] },
    // port 0: any free port, so runs never collide with each other or with a running eddy
    { name: 'eddy (API on)', args: [eddy, 'server', 'run', '-f', CONFIG, '--api-port', '0'] },
  ];
  const caCerts = env[CA_CERTS];
  if (caCerts) targets.push({ name: FLOOR_WITH_CA_CERTS, args: FLOOR_ARGS, env: { [CA_CERTS]: caCerts } });
  return targets;
}

/** A child's environment: this one without NODE_EXTRA_CA_CERTS, logs at warn, then `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { [CA_CERTS]: _caCerts, ...inherited } = process.env;
  return { ...inherited, EDDY_LOG: process.env.EDDY_LOG ?? 'warn', ...extra };
}

/** The line saying NODE_EXTRA_CA_CERTS was removed and what it costs; undefined when no row measured it. */
export function caCertsNote(rows: StartupRow[]): string | undefined {
  const withCerts = rows.find((r) => r.name === FLOOR_WITH_CA_CERTS);
  if (!withCerts) return undefined;
  const [floor, costly] = [summarise(rows[0]), summarise(withCerts)];
  const ms = (costly.wallMedianMs ?? NaN) - (floor.wallMedianMs ?? NaN);
  const cpu = (costly.cpuMedianS ?? NaN) - (floor.cpuMedianS ?? NaN);
  return (
    `${CA_CERTS} is set here: removed from every child's environment (it is this machine's, not eddy's); ` +
    `it costs each node start ${ms.toFixed(0)} ms and ${cpu.toFixed(2)} CPU-s (median, last row against the floor)`
  );
}

/** Peak resident set of a live process in bytes, from /proc (undefined elsewhere). */
export function peakRss(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** An event line: eddy's stdout offramp and the peers' write JSON objects; banners and logs are not. */
const isEventLine = (line: string) => line.trimStart().startsWith('{');

/**
 * One start: spawn, wait for the first event line on stdout, read /proc, kill.
 * `command` defaults to this Node; the peers benchmark starts other binaries.
 */
export function startOnce(args: string[], timeoutMs = 30_000, command = process.execPath, cwd = REPO, env = childEnv()): Promise<StartupSample> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let out = '';
    let err = '';
    let sample: StartupSample | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (sample !== undefined || !out.split('\n').slice(0, -1).some(isEventLine)) return;
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      sample = { wallMs, cpuSeconds: cpuSeconds(child.pid), peakRssBytes: peakRss(child.pid) };
      child.kill('SIGKILL');
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (sample) resolve(sample);
      else reject(new Error(`${args.join(' ')} printed no line (exit ${signal ?? code}): ${err.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

/** Every target `runs` times, interleaved. */
export async function measureStartup(targets: StartupTarget[], runs: number): Promise<StartupRow[]> {
  const rows = targets.map((t) => ({ name: t.name, command: `node ${t.args.join(' ')}`, samples: [] as StartupSample[] }));
  for (let i = 0; i < runs; i++) {
    for (const [j, target] of targets.entries()) rows[j].samples.push(await startOnce(target.args, 30_000, process.execPath, REPO, childEnv(target.env)));
  }
  return rows;
}

/** The q-quantile (nearest rank) of the defined values. */
export function quantile(values: (number | undefined)[], q: number): number | undefined {
  const sorted = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export interface StartupSummary {
  name: string;
  wallMedianMs?: number;
  wallP90Ms?: number;
  cpuMedianS?: number;
  cpuP90S?: number;
  rssMedianBytes?: number;
}

export function summarise(row: StartupRow): StartupSummary {
  const wall = row.samples.map((s) => s.wallMs);
  const cpu = row.samples.map((s) => s.cpuSeconds);
  return {
    name: row.name,
    wallMedianMs: quantile(wall, 0.5),
    wallP90Ms: quantile(wall, 0.9),
    cpuMedianS: quantile(cpu, 0.5),
    cpuP90S: quantile(cpu, 0.9),
    rssMedianBytes: quantile(
      row.samples.map((s) => s.peakRssBytes),
      0.5,
    ),
  };
}

/** The table: medians and p90s, and each row over the node floor (the first row). */
export function startupTable(rows: StartupRow[]): string {
  const summaries = rows.map(summarise);
  const floor = summaries[0];
  const f = (v: number | undefined, digits: number) => (v === undefined ? '-' : v.toFixed(digits));
  const head = ['start', 'wall median ms', 'wall p90 ms', 'CPU-s median', 'CPU-s p90', 'RSS at first line', 'wall/floor', 'CPU/floor'];
  const body = summaries.map((s) => [
    s.name,
    f(s.wallMedianMs, 0),
    f(s.wallP90Ms, 0),
    f(s.cpuMedianS, 2),
    f(s.cpuP90S, 2),
    s.rssMedianBytes === undefined ? '-' : `${(s.rssMedianBytes / 1048576).toFixed(0)} MB`,
    s.wallMedianMs && floor.wallMedianMs ? (s.wallMedianMs / floor.wallMedianMs).toFixed(1) : '-',
    s.cpuMedianS && floor.cpuMedianS ? (s.cpuMedianS / floor.cpuMedianS).toFixed(1) : '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** The runner's one-line summary of the eddy --no-api row against the floor. */
export function startupSummaryLine(rows: StartupRow[]): string {
  const [floor, eddy] = rows.map(summarise);
  const ms = (v?: number) => (v === undefined ? '-' : `${v.toFixed(0)} ms`);
  const cpu = (v?: number) => (v === undefined ? '-' : `${v.toFixed(2)} CPU-s`);
  return (
    `spawn -> first event (median of ${rows[0].samples.length}): eddy ${ms(eddy.wallMedianMs)}, ${cpu(eddy.cpuMedianS)}` +
    ` (p90 ${ms(eddy.wallP90Ms)}); node floor ${ms(floor.wallMedianMs)}, ${cpu(floor.cpuMedianS)}; target < 250 ms, < 0.3 CPU-s`
  );
}

/** BENCH_STARTUP_RUNS: starts per row (10). */
export function runsFromEnv(): number {
  return envNumber('BENCH_STARTUP_RUNS', 10, 1);
}

export async function main(runs = runsFromEnv(), eddy?: string): Promise<StartupRow[]> {
  const rows = await measureStartup(startupTargets(eddy), runs);
  const note = caCertsNote(rows);
  process.stdout.write(`${startupTable(rows)}\n${note ? `${note}\n` : ''}load average ${loadavg()[0].toFixed(1)}\n`);
  return rows;
}

if (require.main === module) {
  main(process.argv[2] ? Number(process.argv[2]) : undefined).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`startup: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
