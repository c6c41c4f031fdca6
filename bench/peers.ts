/**
 * eddy beside Tremor and Benthos on Tremor's own benchmark shape: a blaster
 * replaying the same data -> an empty pipeline -> a blackhole, per codec.
 *
 *   TREMOR_BIN=/path/to/tremor BENTHOS_BIN=/path/to/benthos npm run bench -- peers
 *
 * Without either variable the benchmark is skipped (nothing here fetches or
 * builds a peer). Each peer gets a config in its own format, written to the
 * runner's temporary directory:
 * - Tremor 0.11 YAML: onramp `blaster` (`source`), offramp `blackhole`
 *   (`warmup_secs`, `stop_after_secs`, `significant_figures`), a binding and a
 *   mapping, and `main.trickle` (`select event from in into out;`); its
 *   blackhole prints the HDR histogram (p99) and the throughput when it stops.
 * - Benthos 4: `input: sequence` of `file` inputs over the data lines (the
 *   blaster's replay), `output: drop`; events counted from its `json_api`
 *   metrics' `output_sent` at the end of the warm-up and of the measured window.
 *   Benthos reports no end-to-end latency, so its p99 is absent.
 * For every process tree (eddy with --workers has several processes) CPU
 * time and resident memory are sampled from /proc every 100 ms: CPU-seconds
 * per million events over the measured window, peak RSS as the largest sum
 * over the tree. Start-up is spawn -> first event line of a metronome-like
 * flow to stdout in each one's format (see bench/startup.ts), median of
 * BENCH_PEERS_STARTS (5).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, freePort } from './child';
import { REPO, dataPath, envNumber, loadLines, workDir, writeMsgpackData } from './data';
import { quantile, startOnce } from './startup';

export type PeerCodec = 'json' | 'msgpack' | 'string';
/** a row's benchmark: the empty pipeline per codec, or Tremor's group-by-count or real-workflow (json) */
export type PeerShape = PeerCodec | 'group-by-count' | 'real-workflow';
export const PEER_SHAPES: readonly PeerShape[] = ['json', 'msgpack', 'string', 'group-by-count', 'real-workflow'];

export interface PeerRow {
  who: string;
  codec: PeerShape;
  command: string;
  status: 'ok' | 'skipped' | 'failed';
  message?: string;
  eps?: number;
  cpuPerMillion?: number;
  p99Ns?: number;
  peakRssBytes?: number;
  startupMs?: number;
}

export interface PeersResult {
  /** why nothing ran */
  skipped?: string;
  rows: PeerRow[];
  table: string;
}

export const SKIP_MESSAGE = 'skipped: no peer given; set TREMOR_BIN=/path/to/tremor (0.11) and/or BENTHOS_BIN=/path/to/benthos (4.x) to compare against them';

const SECS = envNumber('BENCH_SECS', 8);
const WARMUP = envNumber('BENCH_WARMUP', 2);

/** The pids of a process and all its descendants (Linux /proc). */
export function processTree(pid: number): number[] {
  const pids = [pid];
  // eslint-disable-next-line @typescript-eslint/prefer-for-of -- a worklist: the loop appends the children it finds to pids
  for (let i = 0; i < pids.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${pids[i]}/task`)) {
        const children = readFileSync(`/proc/${pids[i]}/task/${task}/children`, 'utf8').trim();
        if (children) pids.push(...children.split(' ').map(Number));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function rssBytes(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

interface TreeSample {
  at: number;
  cpu: number;
  rss: number;
}

interface Measured {
  out: string;
  samples: TreeSample[];
  /** when `done` first held, ms on the performance clock */
  doneAt?: number;
}

/**
 * Runs a process, sampling its tree every 100 ms, until it exits, or until
 * `done(stdout)` holds (then it is killed), or the timeout.
 */
function runSampled(command: string, args: string[], timeoutMs: number, done?: (out: string) => boolean, cwd = REPO): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, EDDY_LOG: process.env.EDDY_LOG ?? 'warn' } });
    const m: Measured = { out: '', samples: [] };
    let err = '';
    const sample = () => {
      if (child.pid === undefined) return;
      const tree = processTree(child.pid);
      // cpuSeconds already adds the process's descendants (cluster workers): not summed over the tree again
      const cpu = cpuSeconds(child.pid) ?? 0;
      m.samples.push({ at: performance.now(), cpu, rss: tree.reduce((sum, pid) => sum + rssBytes(pid), 0) });
    };
    const sampler = setInterval(sample, 100);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      m.out += d;
      if (done && m.doneAt === undefined && done(m.out)) {
        sample();
        m.doneAt = performance.now();
        child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(sampler);
      clearTimeout(timer);
      if (m.doneAt === undefined && code !== 0) {
        reject(new Error(`${command} ${args.join(' ')} exited with ${signal ?? code}: ${err.trim().split('\n').slice(-3).join(' | ')}`));
      } else resolve(m);
    });
  });
}

/** CPU seconds of the tree between two times, interpolated between samples (the last sample for a time after it). */
function cpuBetween(samples: TreeSample[], from: number, to: number): number | undefined {
  const at = (t: number) => {
    const i = samples.findIndex((s) => s.at >= t);
    if (i === -1) return samples.at(-1)?.cpu;
    if (i === 0) return samples[0].at === t ? samples[0].cpu : undefined;
    const [a, b] = [samples[i - 1], samples[i]];
    return a.cpu + ((b.cpu - a.cpu) * (t - a.at)) / (b.at - a.at);
  };
  const [start, end] = [at(from), at(to)];
  return start === undefined || end === undefined ? undefined : end - start;
}

const peakRss = (samples: TreeSample[]) => Math.max(0, ...samples.map((s) => s.rss));

/**
 * The last line of `out` that is a JSON object with `key`: eddy's structured
 * blackhole report (`events_per_second`), or with --workers the primary's
 * combined one (`workers`; each worker prints its own line first).
 */
function eddyReport(out: string, key: string): { events_per_second: number; events: number; seconds: number; latency_ns: { p99: number } } {
  for (const line of out.split('\n').reverse()) {
    if (!line.includes(`"${key}"`)) continue;
    return JSON.parse(line) as ReturnType<typeof eddyReport>;
  }
  throw new Error(`no blackhole report in: ${out.slice(0, 200)}`);
}

/**
 * Tremor's blackhole text: the HDR percentile table (ns) and its
 * `Total count` over the measured `secs` (0.11.12 prints `#[Max = ..., Total
 * count = N]` and `Throughput: X MB/s`, no event rate), or a
 * `Throughput (events): 445.1k events/s` line where a build prints one.
 */
export function parseTremorReport(out: string, secs: number): { eps: number; events: number; p99Ns?: number } {
  const rate = /Throughput \(events\):\s*([0-9.]+)k events\/s/.exec(out);
  const total = /Total count\s*=\s*([0-9.]+)\]/.exec(out);
  if (!rate && !total) throw new Error(`no "Total count" nor "Throughput (events)" in Tremor's output: ${out.slice(-300)}`);
  const eps = rate ? Number(rate[1]) * 1000 : Number(total![1]) / secs;
  let p99Ns: number | undefined;
  for (const line of out.split('\n')) {
    const row = /^\s*([0-9.]+)\s+([0-9.]+)\s+\d+\s+[0-9.inf]+\s*$/.exec(line);
    if (row && Number(row[2]) >= 0.99) {
      p99Ns = Number(row[1]);
      break;
    }
  }
  return { eps, events: total ? Number(total[1]) : eps * secs, p99Ns };
}

/** Benthos' `json_api` metrics: the `output_sent` counter, summed over its label sets (`output_sent{path="root.output"}`). */
export function parseOutputSent(metrics: string): number | undefined {
  let total: number | undefined;
  for (const [key, value] of Object.entries(JSON.parse(metrics) as Record<string, unknown>)) {
    if ((key === 'output_sent' || key.startsWith('output_sent{')) && typeof value === 'number') total = (total ?? 0) + value;
  }
  return total;
}

// ---- configs, each in its runtime's own format ----

function eddyConfig(shape: PeerShape, data: string): string {
  if (shape === 'group-by-count' || shape === 'real-workflow') return benchConfig(`${shape}.yaml`, data);
  const codec = shape;
  const source = codec === 'msgpack' ? `{ source: "${data}", base64: true }` : `{ source: "${data}" }`;
  return `onramp:
  - { id: blaster, type: blaster, codec: ${codec}, config: ${source} }
offramp:
  - { id: blackhole, type: blackhole, codec: ${codec}, config: { warmup_secs: ${WARMUP}, stop_after_secs: ${SECS}, significant_figures: 2, structured: true } }
binding:
  - id: bench
    links:
      "/onramp/blaster/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/blackhole/{instance}/in"]
mapping:
  /binding/bench/main: { instance: main }
`;
}

/** eddy's config of a shape in bench/ (group-by-count.yaml, real-workflow.yaml) with its placeholders filled. */
function benchConfig(file: string, data: string): string {
  return readFileSync(join(REPO, 'bench', file), 'utf8')
    .replace('${DATA}', data)
    .replace('${WARMUP}', String(WARMUP))
    .replace('${SECS}', String(SECS));
}

/**
 * Tremor 0.11: the shape of its tests/bench configs; the pipeline is a
 * .trickle file beside it. Its blackhole measures `stop_after_secs` after
 * `warmup_secs` (it stops at their sum), as eddy's does.
 */
export function tremorConfig(codec: PeerCodec, data: string): string {
  return `onramp:
  - id: blaster
    type: blaster
    codec: ${codec}
    config:
      source: ${JSON.stringify(data)}
offramp:
  - id: blackhole
    type: blackhole
    codec: ${codec}
    config:
      warmup_secs: ${WARMUP}
      stop_after_secs: ${SECS}
      significant_figures: 2
binding:
  - id: bench
    links:
      '/onramp/blaster/{instance}/out': [ '/pipeline/main/{instance}/in' ]
      '/pipeline/main/{instance}/out': [ '/offramp/blackhole/{instance}/in' ]
mapping:
  /binding/bench/01:
    instance: "01"
`;
}

const TREMOR_PIPELINE = 'select event from in into out;\n';

/**
 * Tremor's group-by-count in its own query language: a tumbling window of
 * 10 events per index_type, each emitted as its count and its events (json
 * in and out, tremorConfig('json')). Every output stands for 10 input
 * events: the row multiplies Tremor's count of outputs by 10.
 */
export const TREMOR_GROUP_BY_COUNT = `define tumbling window ten_events
with
  size = 10
end;

select {
  "count": aggr::stats::count(),
  "first": aggr::win::collect_flattened(event)
}
from in[ten_events]
group by set(event.index_type)
into out;
`;
/**
 * Tremor's real-workflow-throughput-json script (its bench/ directory,
 * 0.11.12), as Tremor runs it: classify each event into $class, $rate and
 * $dimensions, then grouper::bucket; pass and overflow both go out (json in
 * and out, tremorConfig('json')). eddy's bench/real-workflow.yaml is the same
 * work in runtime::cel. \`use std::array\` needs Tremor's standard library:
 * run it with TREMOR_PATH set to its lib directory.
 */
export const TREMOR_REAL_WORKFLOW = `define script runtime
script
  use std::array;
  match event.application of
    case "app1" => let $class = "applog_app1",  let $rate = 1250, let $dimension = event.application, emit event
    case "app2" => let $class = "applog_app1",  let $rate = 2500, let $dimension = event.application, emit event
    case "app3" => let $class = "applog_app1",  let $rate = 18750, let $dimension = event.application, emit event
    case "app4" => let $class = "applog_app1",  let $rate = 750, let $dimension = event.application, emit event
    case "app5" => let $class = "applog_app1",  let $rate = 18750, let $dimension = event.application, emit event
    default => null
  end;
  match event.index_type of
    case "applog_app6" => let $class = "applog_app6", let $rate = 4500, let $dimensions = event.logger_name, emit event
    case "syslog_app1" => let $class = "syslog_app1", let $rate = 2500, let $dimensions = event.syslog_hostname, emit event
    default => null
  end;
  match array::contains(event.tags, "tag1") of
    case true => let $class = "syslog_app2", let $rate = 125, let $dimensions = event.syslog_hostname, emit event
    default => null
  end;
  match event.index_type of
    case "syslog_app3" => let $class = "syslog_app3", let $rate = 1750, let $dimensions = event.syslog_hostname
    case "syslog_app4" => let $class = "syslog_app4", let $rate = 7500, let $dimensions = event.syslog_hostname
    case "syslog_app5" => let $class = "syslog_app5", let $rate = 125, let $dimensions = event.syslog_hostname
    case "syslog_app6" => let $class = "syslog_app6", let $rate = 3750, let $dimensions = event.syslog_hostname
    default => let $class = "default", let $rate = 250
  end;
  event
end;

define grouper::bucket operator grouper;

create script runtime;
create operator grouper;

select event from in into runtime;
select event from runtime into grouper;
select event from grouper into out;
select event from grouper/overflow into out;
`;

/** input events per output of group-by-count */
const GROUP_SIZE = 10;

const TREMOR_STARTUP = `onramp:
  - id: metronome
    type: metronome
    config:
      interval: 1
offramp:
  - id: out
    type: stdout
    codec: json
binding:
  - id: startup
    links:
      '/onramp/metronome/{instance}/out': [ '/pipeline/main/{instance}/in' ]
      '/pipeline/main/{instance}/out': [ '/offramp/out/{instance}/in' ]
mapping:
  /binding/startup/01:
    instance: "01"
`;

/** Benthos 4: the data lines replayed by a sequence of file inputs, dropped; json re-serialises each event. */
export function benthosConfig(codec: PeerCodec, linesFile: string, port: number, repeats: number): string {
  const file = `      - file: { paths: [ ${JSON.stringify(linesFile)} ], scanner: { lines: {} } }\n`;
  const processors = codec === 'json' ? '  processors:\n    - mapping: root = this\n' : '  processors: []\n';
  return `http:
  address: 127.0.0.1:${port}
logger:
  level: WARN
metrics:
  json_api: {}
input:
  sequence:
    inputs:
${file.repeat(repeats)}pipeline:
${processors}output:
  drop: {}
`;
}

const BENTHOS_STARTUP = `http:
  enabled: false
logger:
  level: WARN
input:
  generate:
    interval: 1ms
    mapping: 'root = {"tick": count("ticks")}'
output:
  stdout: {}
`;

// ---- runs ----

async function runEddy(eddy: string, codec: PeerShape, data: string, dir: string, workers?: number): Promise<PeerRow> {
  const who = workers === undefined ? 'eddy (1 worker)' : `eddy (--workers ${workers})`;
  const path = join(dir, `peers-eddy-${codec}.yaml`);
  writeFileSync(path, eddyConfig(codec, data));
  const args = [eddy, 'server', 'run', '-f', path, '--no-api', ...(workers === undefined ? [] : ['--workers', String(workers)])];
  const key = workers === undefined ? 'events_per_second' : 'workers';
  const m = await runSampled(process.execPath, args, (WARMUP + SECS + 60) * 1000, (out) => out.includes(`"${key}"`));
  const r = eddyReport(m.out, key);
  const cpu = cpuBetween(m.samples, m.doneAt! - r.seconds * 1000, m.doneAt!);
  return {
    who,
    codec,
    command: `node ${args.join(' ')}`,
    status: 'ok',
    eps: r.events_per_second,
    cpuPerMillion: cpu === undefined ? undefined : (cpu / r.events) * 1e6,
    p99Ns: r.latency_ns.p99,
    peakRssBytes: peakRss(m.samples),
  };
}

async function runTremor(bin: string, shape: PeerShape, dir: string): Promise<PeerRow> {
  if (shape === 'msgpack') throw new Error('no Tremor msgpack blaster config');
  const codec = shape === 'group-by-count' || shape === 'real-workflow' ? 'json' : shape;
  const config = join(dir, `tremor-${shape}.yaml`);
  writeFileSync(config, tremorConfig(codec, dataPath()));
  // the pipeline's id is its file's name: main, as the binding says; one directory per shape
  const pipelineDir = join(dir, `tremor-${shape}`);
  mkdirSync(pipelineDir, { recursive: true });
  const mainTrickle = join(pipelineDir, 'main.trickle');
  writeFileSync(mainTrickle, shape === 'group-by-count' ? TREMOR_GROUP_BY_COUNT : shape === 'real-workflow' ? TREMOR_REAL_WORKFLOW : TREMOR_PIPELINE);
  const args = ['server', 'run', '--no-api', '-f', config, mainTrickle];
  // it prints the histogram, then `Throughput: X MB/s`, then exits
  const m = await runSampled(bin, args, (WARMUP + SECS + 60) * 1000, (out) => /Throughput.*\/s/.test(out), dir);
  const r = parseTremorReport(m.out, SECS);
  const per = shape === 'group-by-count' ? GROUP_SIZE : 1;
  const cpu = cpuBetween(m.samples, m.doneAt! - SECS * 1000, m.doneAt!);
  return {
    who: 'tremor',
    codec: shape,
    command: `${bin} ${args.join(' ')}`,
    status: 'ok',
    eps: r.eps * per,
    cpuPerMillion: cpu === undefined ? undefined : (cpu / (r.events * per)) * 1e6,
    p99Ns: r.p99Ns,
    peakRssBytes: peakRss(m.samples),
  };
}

async function metricsCount(port: number): Promise<number | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    return parseOutputSent(await res.text());
  } catch {
    return undefined;
  }
}

async function runBenthos(bin: string, codec: PeerCodec, linesFile: string, lineCount: number, dir: string): Promise<PeerRow> {
  const port = await freePort();
  // enough replays for a million events a second over the whole run
  const repeats = Math.max(10, Math.ceil(((WARMUP + SECS + 5) * 1e6) / lineCount));
  const config = join(dir, `benthos-${codec}.yaml`);
  writeFileSync(config, benthosConfig(codec, linesFile, port, repeats));
  const args = ['-c', config];
  const child = spawn(bin, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const samples: TreeSample[] = [];
  const sample = () => {
    if (child.pid === undefined) return;
    const tree = processTree(child.pid);
    samples.push({
      at: performance.now(),
      cpu: tree.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0),
      rss: tree.reduce((sum, pid) => sum + rssBytes(pid), 0),
    });
  };
  const sampler = setInterval(sample, 100);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  try {
    await sleep(WARMUP * 1000);
    const t0 = performance.now();
    sample();
    const c0 = await metricsCount(port);
    await sleep(SECS * 1000);
    const t1 = performance.now();
    sample();
    const c1 = await metricsCount(port);
    if (c0 === undefined || c1 === undefined)
      throw new Error(`no output_sent metric at http://127.0.0.1:${port}/metrics: ${err.trim().split('\n').slice(-3).join(' | ')}`);
    const events = c1 - c0;
    const cpu = cpuBetween(samples, t0, t1);
    return {
      who: 'benthos',
      codec,
      command: `${bin} ${args.join(' ')}`,
      status: 'ok',
      eps: events / ((t1 - t0) / 1000),
      cpuPerMillion: cpu === undefined || events === 0 ? undefined : (cpu / events) * 1e6,
      peakRssBytes: peakRss(samples),
    };
  } finally {
    clearInterval(sampler);
    child.kill('SIGKILL');
    await exited;
  }
}

/** Median spawn -> first event line of `command args`. */
async function medianStart(command: string, args: string[], cwd: string, starts: number): Promise<number> {
  const walls: number[] = [];
  for (let i = 0; i < starts; i++) walls.push((await startOnce(args, 30_000, command, cwd)).wallMs);
  return quantile(walls, 0.5)!;
}

/** `--workers N` when this build's usage text (`eddy server run --help`, on stdout or stderr, any exit status) names the flag. */
export function workersSupported(eddy: string): boolean {
  const r = spawnSync(process.execPath, [eddy, 'server', 'run', '--help'], { encoding: 'utf8', timeout: 30_000 });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`.includes('--workers');
}

export function peersTable(rows: PeerRow[]): string {
  const head = ['shape', 'runtime', 'events/s', 'CPU-s per M events', 'p99', 'peak RSS', 'start-up'];
  const n = (v: number | undefined, f: (x: number) => string) => (v === undefined ? '-' : f(v));
  const body = rows.map((r) =>
    r.status !== 'ok'
      ? [r.codec, r.who, r.message ?? r.status]
      : [
          r.codec,
          r.who,
          n(r.eps, (x) => Math.round(x).toLocaleString('en-US')),
          n(r.cpuPerMillion, (x) => x.toFixed(2)),
          n(r.p99Ns, (x) => `${(x / 1e6).toFixed(2)} ms`),
          n(r.peakRssBytes, (x) => `${(x / 1048576).toFixed(0)} MB`),
          n(r.startupMs, (x) => `${x.toFixed(0)} ms`),
        ],
  );
  const widths = head.map((h, i) => Math.max(h.length, ...body.filter((b) => b.length === head.length).map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells.length === head.length
      ? cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
      : `${cells[0].padEnd(widths[0])}  ${cells[1].padEnd(widths[1])}  ${cells[2]}`;
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export async function main(eddy = join(REPO, 'bin', 'eddy'), dir = workDir(), shapes: readonly PeerShape[] = PEER_SHAPES): Promise<PeersResult> {
  // eslint-disable-next-line @typescript-eslint/prefer-nullish-coalescing -- set but empty means not set
  const tremor = process.env.TREMOR_BIN || undefined;
  // eslint-disable-next-line @typescript-eslint/prefer-nullish-coalescing -- set but empty means not set
  const benthos = process.env.BENTHOS_BIN || undefined;
  if (!tremor && !benthos) {
    return { skipped: SKIP_MESSAGE, rows: [], table: '' };
  }
  const starts = envNumber('BENCH_PEERS_STARTS', 5, 1);
  const workers = workersSupported(eddy) ? cpus().length : undefined;
  const lines = await loadLines(dataPath());
  // the data lines repeated to about 100,000, so Benthos' sequence reopens its file rarely
  const linesFile = join(dir, 'peers-data.json');
  const copies = Math.max(1, Math.round(100_000 / lines.length));
  const once = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
  writeFileSync(linesFile, Buffer.concat(Array.from({ length: copies }, () => once)));
  const msgpack = await writeMsgpackData(dataPath(), dir);
  const rows: PeerRow[] = [];
  const attempt = async (who: string, codec: PeerShape, run: () => Promise<PeerRow>) => {
    process.stderr.write(`  peers: ${who} ${codec}...\n`);
    try {
      rows.push(await run());
    } catch (err) {
      rows.push({ who, codec, command: '', status: 'failed', message: (err as Error).message });
    }
  };
  for (const codec of shapes) {
    const data = codec === 'msgpack' ? msgpack : dataPath();
    await attempt('eddy (1 worker)', codec, () => runEddy(eddy, codec, data, dir));
    if (workers !== undefined) await attempt(`eddy (--workers ${workers})`, codec, () => runEddy(eddy, codec, data, dir, workers));
    if (tremor) {
      // Tremor's own benchmarks replay json and string lines; its msgpack shape is not known here
      if (codec === 'msgpack') rows.push({ who: 'tremor', codec, command: '', status: 'skipped', message: 'not compared: no Tremor msgpack blaster config' });
      else await attempt('tremor', codec, () => runTremor(tremor, codec, dir));
    }
    if (benthos) {
      if (codec === 'msgpack')
        rows.push({ who: 'benthos', codec, command: '', status: 'skipped', message: 'not compared: Benthos has no msgpack replay input' });
      else if (codec === 'group-by-count' || codec === 'real-workflow')
        rows.push({ who: 'benthos', codec, command: '', status: 'skipped', message: 'not compared: no Benthos config of this shape here' });
      else await attempt('benthos', codec, () => runBenthos(benthos, codec, linesFile, lines.length * copies, dir));
    }
  }
  // start-up, once per runtime, beside each json row
  const startupConfig = join(REPO, 'bench', 'startup.yaml');
  const startTimes = new Map<string, number>();
  const timeStart = async (who: string, command: string, args: string[], cwd = REPO) => {
    try {
      startTimes.set(who, await medianStart(command, args, cwd, starts));
    } catch (err) {
      process.stderr.write(`  peers: start-up of ${who}: ${(err as Error).message}\n`);
    }
  };
  await timeStart('eddy (1 worker)', process.execPath, [eddy, 'server', 'run', '-f', startupConfig, '--no-api']);
  if (workers !== undefined)
    await timeStart(`eddy (--workers ${workers})`, process.execPath, [eddy, 'server', 'run', '-f', startupConfig, '--no-api', '--workers', String(workers)]);
  if (tremor) {
    writeFileSync(join(dir, 'tremor-startup.yaml'), TREMOR_STARTUP);
    writeFileSync(join(dir, 'main.trickle'), TREMOR_PIPELINE);
    await timeStart('tremor', tremor, ['server', 'run', '-f', join(dir, 'tremor-startup.yaml'), join(dir, 'main.trickle')], dir);
  }
  if (benthos) {
    writeFileSync(join(dir, 'benthos-startup.yaml'), BENTHOS_STARTUP);
    await timeStart('benthos', benthos, ['-c', join(dir, 'benthos-startup.yaml')], dir);
  }
  for (const row of rows) if (row.codec === 'json' && row.status === 'ok') row.startupMs = startTimes.get(row.who);
  const table = `${peersTable(rows)}\nload average ${loadavg()[0].toFixed(1)}; ${SECS} s measured after ${WARMUP} s warm-up; start-up: median of ${starts}`;
  return { rows, table };
}

if (require.main === module) {
  const asked = process.argv.slice(2) as PeerShape[];
  const unknown = asked.filter((a) => !PEER_SHAPES.includes(a));
  if (unknown.length > 0) {
    process.stderr.write(`peers: unknown shape ${unknown.join(', ')}; known: ${PEER_SHAPES.join(', ')}\n`);
    process.exit(2);
  }
  main(process.env.BENCH_EDDY, undefined, asked.length > 0 ? asked : PEER_SHAPES).then(
    (r) => {
      process.stdout.write(`${r.skipped ?? r.table}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`peers: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
