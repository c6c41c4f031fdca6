/**
 * The benchmark runner: `npm run bench` runs every default benchmark,
 * `npm run bench -- NAME...` the named ones (`soak` only when named).
 *
 * Each benchmark is a config file in bench/ in eddy's own format, with
 * `${DATA}`-style placeholders that this runner fills in and writes to a
 * temporary file, then runs `node bin/eddy server run -f <tmp.yaml> --no-api`
 * as a child process and reads the blackhole's structured JSON line from its
 * stdout. Beside every row it measures, in the same run and just before it,
 * the raw baseline: a tight Node loop doing only that row's unavoidable work
 * (bench/raw.ts), and prints eddy/raw.
 *
 * Environment: BENCH_SECS (measured seconds, default 8), BENCH_WARMUP
 * (default 2), BENCH_RAW_SECS (default min(BENCH_SECS, 4)), BENCH_SOAK_SECS
 * (default 60), BENCH_DATA (default bench/data/data.json.xz), BENCH_JSON (write the rows as JSON to this file),
 * BENCH_EDDY (the bin/eddy of another build, to compare builds), BENCH_NODE_ARGS (node flags
 * for the eddy process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Registries } from '../src/runtime/registries';
import type { BlackholeReport } from '../src/connectors/blackhole/offramp';
import {
  REPO,
  ROLLING_KEYS,
  TUMBLING_GROUPS,
  dataPath,
  envNumber,
  groupedLines,
  loadLines,
  rollingKeyLines,
  workDir,
  writeLines,
  writeMsgpackData,
} from './data';
import { runChild } from './child';
import type { RawKind, RawResult } from './raw';
import type { SlowSinkReport } from './slow-sink';
import type { RestEchoResult } from './rest-echo';
import type { KafkaBenchResult } from './kafka';

export interface Bench {
  name: string;
  /** config file in bench/; absent for an in-process script */
  file?: string;
  /** which raw loop stands beside it */
  raw?: RawKind;
  /** only when named on the command line */
  optIn?: boolean;
  /** the blackhole counts batch events; each holds this many events */
  eventsPerReport?: number;
  /** measured seconds, overriding BENCH_SECS */
  secs?: () => number;
  note?: string;
  /** `eddy server run --workers N` (docs/workers.md): the row reads the primary's combined report line */
  workers?: number;
  /** a network benchmark with its own load generator and raw server (bench/<script>.ts) */
  script?: 'tcp-ingest' | 'rest-echo' | 'kafka' | 'postgres-sink' | 'elastic-sink';
  /** a benchmark with its own table (bench/startup.ts, bench/peers.ts) */
  own?: 'startup' | 'peers';
}

export const BENCHES: Bench[] = [
  { name: 'passthrough-string', file: 'passthrough-string.yaml', raw: 'string' },
  { name: 'passthrough-json', file: 'passthrough-json.yaml', raw: 'json' },
  { name: 'passthrough-json-w2', file: 'passthrough-json.yaml', raw: 'json', workers: 2, note: 'target >= 1.7x passthrough-json in the same run' },
  { name: 'passthrough-msgpack', file: 'passthrough-msgpack.yaml', raw: 'msgpack' },
  { name: 'merge-two-inputs', file: 'merge-two-inputs.yaml', raw: 'json' },
  { name: 'workflow', file: 'workflow.yaml', raw: 'json' },
  {
    name: 'real-workflow',
    file: 'real-workflow.yaml',
    raw: 'real-workflow',
    note: "Tremor's real-workflow: runtime::cel classifies into meta class/rate/dimensions, grouper::bucket; target >= 0.7 per CPU-s",
  },
  {
    name: 'real-workflow-w2',
    file: 'real-workflow.yaml',
    raw: 'real-workflow',
    workers: 2,
    note: 'real-workflow with --workers 2, beside Tremor 0.11.12 (see peers)',
  },
  { name: 'batch', file: 'batch.yaml', raw: 'json', eventsPerReport: 50 },
  { name: 'paced-latency', file: 'paced-latency.yaml', note: 'p99 target < 1 ms' },
  { name: 'slow-sink', note: 'in-process; see bench/slow-sink.ts' },
  { name: 'rest-echo', script: 'rest-echo', note: 'linked rest echo under wrk; raw: a node:http JSON echo' },
  { name: 'postgres-sink', script: 'postgres-sink', optIn: true, note: 'blaster -> generic::batch -> postgres, beside a raw pg loop (bench/sinks.ts)' },
  {
    name: 'elastic-sink',
    script: 'elastic-sink',
    optIn: true,
    note: 'blaster -> cel meta -> generic::batch -> elastic, beside a raw client.bulk loop (bench/sinks.ts)',
  },
  {
    name: 'kafka',
    script: 'kafka',
    optIn: true,
    note: 'kafka -> passthrough -> kafka, commit on ack, beside the @platformatic/kafka relay before and after; needs scripts/services start kafka; see bench/kafka.ts',
  },
  {
    name: 'kafka-window',
    script: 'kafka',
    optIn: true,
    note: 'kafka -> window::aggregate (1 s tumbling count per key) -> kafka, commit on ack, beside the same relay; run with kafka, they share one input and its baselines',
  },
  { name: 'tcp-ingest', script: 'tcp-ingest', note: 'JSON lines over loopback; raw: a net server that splits, parses and re-serialises' },
  { name: 'startup', own: 'startup', note: 'spawn -> first event, beside `node -e`; see bench/startup.ts' },
  { name: 'peers', own: 'peers', note: 'Tremor / Benthos on the same shapes; TREMOR_BIN, BENTHOS_BIN; see bench/peers.ts' },
  {
    name: 'group-by-count',
    file: 'group-by-count.yaml',
    raw: 'group-by-count',
    note: "Tremor's group-by-count: count windows of 10 per index_type, count() and collect(event); events/s are input events",
  },
  {
    name: 'group-by-count-w2',
    file: 'group-by-count.yaml',
    raw: 'group-by-count',
    workers: 2,
    note: 'group-by-count with --workers 2, beside Tremor 0.11.12 (~175,000 input events/s on two cores)',
  },
  {
    name: 'tumbling-groups',
    file: 'tumbling-groups.yaml',
    raw: 'tumbling-groups',
    note: '1 s tumbling processing-time windows, 1,000 groups, five aggregates',
  },
  {
    name: 'soak-windows',
    file: 'soak-windows.yaml',
    raw: 'soak-windows',
    optIn: true,
    secs: () => envNumber('BENCH_SOAK_SECS', 60),
    note: '1 s tumbling windows over 100,000 rolling keys for 60 s; RSS flat (last tenth of the window within 10 % of its second tenth)',
  },
  { name: 'soak', file: 'soak.yaml', raw: 'json', optIn: true, secs: () => envNumber('BENCH_SOAK_SECS', 60), note: 'peak RSS target < 200 MB' },
];

/** rest-echo counts requests (one event each) and latency in ms. */
function fromRestEcho(r: RestEchoResult): ScriptResult {
  return {
    eddy: { events_per_second: r.eddy.requestsPerSecond, p99_ns: r.eddy.p99 * 1e6 },
    raw: { events_per_second: r.raw.requestsPerSecond },
    ratio: r.ratio,
    cpu_ratio: r.cpuRatio,
    load_average: loadavg()[0],
  };
}

/** What a network benchmark module's `main` returns (bench/tcp-ingest.ts; rest-echo through `fromRestEcho`). */
interface ScriptResult {
  eddy: { events_per_second: number; megabytes_per_second?: number; p99_ns?: number; peak_rss_bytes?: number };
  raw: { events_per_second: number };
  ratio: number;
  cpu_ratio?: number;
  load_average?: number;
}

interface Row {
  name: string;
  status: 'ok' | 'skipped' | 'failed';
  message?: string;
  eps?: number;
  mbps?: number;
  p50?: number;
  p99?: number;
  p999?: number;
  rss?: number;
  rawEps?: number;
  ratio?: number;
  /** eddy/raw in events per CPU-second: what the runtime costs, little moved by other load on the machine */
  cpuRatio?: number;
  load?: number;
  extra?: string;
  /** a table of its own, printed after the main one */
  detail?: string;
  report?: unknown;
  raw?: RawResult[];
}

const SECS = envNumber('BENCH_SECS', 8);
const WARMUP = envNumber('BENCH_WARMUP', 2);
const RAW_SECS = envNumber('BENCH_RAW_SECS', Math.max(1, Math.min(SECS, 4)));
/** BENCH_EDDY: another build's bin/eddy, to compare builds with the same runner and baselines */
const EDDY = process.env.BENCH_EDDY ?? join(REPO, 'bin', 'eddy');
/** node flags for the eddy process (BENCH_NODE_ARGS, split at spaces) */
const nodeArgs = (): string[] => (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');

/** The last line of `out` that parses as a JSON object with `key`. */
function jsonLine(out: string, key: string): unknown {
  for (const line of out.split('\n').reverse()) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const v = JSON.parse(t) as Record<string, unknown>;
      if (key in v) return v;
    } catch {
      // not the report line
    }
  }
  throw new Error(`no JSON report line with "${key}" in the output: ${out.slice(0, 200)}`);
}

/** Fills `${NAME}` placeholders; a placeholder left unfilled is an error. */
export function template(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => {
    if (!(name in vars)) throw new Error(`unknown placeholder ${whole}`);
    return vars[name];
  });
}

/** What a config needs that this build may not have: codecs, ramp and operator types. */
export function missingTypes(config: string, registries: Registries): string[] {
  const doc = parseYaml(config) as {
    onramp?: { type: string; codec?: string }[];
    offramp?: { type: string; codec?: string }[];
    pipeline?: { nodes?: { type: string }[] }[];
  };
  const missing: string[] = [];
  const need = (ok: boolean, what: string) => {
    if (!ok && !missing.includes(what)) missing.push(what);
  };
  for (const r of doc.onramp ?? []) {
    need(registries.onramps.has(r.type), `onramp type ${r.type}`);
    if (r.codec) need(registries.codecs.has(r.codec), `codec ${r.codec}`);
  }
  for (const r of doc.offramp ?? []) {
    need(registries.offramps.has(r.type), `offramp type ${r.type}`);
    if (r.codec) need(registries.codecs.has(r.codec), `codec ${r.codec}`);
  }
  for (const p of doc.pipeline ?? []) for (const n of p.nodes ?? []) need(registries.operators.has(n.type), `operator ${n.type}`);
  return missing;
}

async function rawBaseline(kind: RawKind): Promise<RawResult> {
  const { out } = await runChild([join(__dirname, 'raw.js'), kind, String(RAW_SECS), String(Math.min(1, RAW_SECS)), dataPath()], (RAW_SECS + 30) * 1000);
  return jsonLine(out, 'events_per_second') as RawResult;
}

class Runner {
  readonly registries = Registries.withBuiltins();
  readonly dir = workDir();
  readonly rows: Row[] = [];
  private msgpackData?: string;
  private groupsData?: string;
  private keysData?: string;
  /** events/s of json passthrough in this run, for the paced benchmark */
  private jsonMax?: number;
  /** the kafka rows named in this run: one bench/kafka.ts run measures them all, beside one pair of relay runs */
  kafkaRows: string[] = [];
  private kafka?: Promise<KafkaBenchResult>;

  async vars(bench: Bench): Promise<Record<string, string>> {
    const secs = bench.secs ? bench.secs() : SECS;
    const vars: Record<string, string> = { DATA: dataPath(), WARMUP: String(WARMUP), SECS: String(secs) };
    const text = readFileSync(join(REPO, 'bench', bench.file!), 'utf8');
    if (text.includes('${DATA_MSGPACK}')) vars.DATA_MSGPACK = this.msgpackData ??= await writeMsgpackData(dataPath(), this.dir);
    if (text.includes('${DATA_GROUPS}'))
      vars.DATA_GROUPS = this.groupsData ??= writeLines(groupedLines(await loadLines(dataPath()), TUMBLING_GROUPS), this.dir, 'data-groups.json');
    if (text.includes('${DATA_KEYS}'))
      vars.DATA_KEYS = this.keysData ??= writeLines(rollingKeyLines(await loadLines(dataPath()), ROLLING_KEYS), this.dir, 'data-keys.json');
    if (text.includes('${INTERVAL}')) {
      if (this.jsonMax === undefined) {
        process.stderr.write('  (measuring json passthrough first, for the pacing)\n');
        const row = await this.runConfig(
          BENCHES.find((b) => b.name === 'passthrough-json')!,
          false,
        );
        if (row.status !== 'ok') throw new Error(`cannot pace: passthrough-json ${row.status}: ${row.message}`);
      }
      // half the maximum rate: nanoseconds between events
      vars.INTERVAL = String(Math.max(1, Math.round(1e9 / (this.jsonMax! / 2))));
    }
    return vars;
  }

  async runConfig(bench: Bench, withRaw = true): Promise<Row> {
    const source = readFileSync(join(REPO, 'bench', bench.file!), 'utf8');
    // availability first, before preparing data the build cannot use
    const missing = missingTypes(source.replace(/\$\{[A-Z_]+\}/g, '0'), this.registries);
    if (missing.length > 0) return { name: bench.name, status: 'skipped', message: `skipped: ${missing.join(', ')} not available` };
    const vars = await this.vars(bench);
    const config = template(source, vars);
    const path = join(this.dir, `${bench.name}.yaml`);
    writeFileSync(path, config);
    // the raw loop just before and just after eddy, so both see the machine as eddy did; the faster one counts
    const rawBefore = withRaw && bench.raw ? await rawBaseline(bench.raw) : undefined;
    const load = loadavg()[0];
    const secs = Number(vars.SECS);
    // with workers, each worker prints its own line and the primary a combined one, the one with `workers`
    const reportKey = bench.workers ? 'workers' : 'events_per_second';
    const child = await runChild(
      [...nodeArgs(), EDDY, 'server', 'run', '-f', path, '--no-api', ...(bench.workers ? ['--workers', String(bench.workers)] : [])],
      (WARMUP + secs + 60) * 1000,
      { ...process.env, EDDY_LOG: process.env.EDDY_LOG ?? 'warn' },
      reportKey,
    );
    const r = jsonLine(child.out, reportKey) as BlackholeReport;
    const cpu = child.cpuInWindow(r.seconds);
    const rawAfter = withRaw && bench.raw ? await rawBaseline(bench.raw) : undefined;
    const eps = r.events_per_second * (bench.eventsPerReport ?? 1);
    if (bench.name === 'passthrough-json') this.jsonMax = eps;
    const row: Row = {
      name: bench.name,
      status: 'ok',
      eps,
      mbps: r.megabytes_per_second,
      p50: r.latency_ns.p50,
      p99: r.latency_ns.p99,
      p999: r.latency_ns.p999,
      rss: r.peak_rss_bytes,
      load,
      report: r,
    };
    if (rawBefore && rawAfter) {
      const raws = [rawBefore, rawAfter];
      row.raw = raws;
      row.rawEps = Math.max(...raws.map((x) => x.events_per_second));
      row.ratio = eps / row.rawEps;
      if (cpu !== undefined && cpu > 0) {
        const rawPerCpu = Math.max(...raws.map((x) => x.events / x.cpu_seconds));
        row.cpuRatio = (r.events * (bench.eventsPerReport ?? 1)) / cpu / rawPerCpu;
      }
      const [lo, hi] = raws.map((x) => x.events_per_second).sort((a, b) => a - b);
      if (hi > lo * 1.25) row.extra = `noisy: raw ${count(lo)} and ${count(hi)} ev/s before/after; load average ${load.toFixed(1)}`;
    }
    if (bench.workers) {
      const single = this.rows.find((x) => x.name === bench.file!.replace(/\.yaml$/, '') && x.status === 'ok');
      const vsOne = single?.eps ? `${(eps / single.eps).toFixed(2)}x the 1-worker row of this run; ` : '';
      row.extra = [`${bench.workers} workers: ${vsOne}peak RSS per worker, load average ${load.toFixed(1)}`, row.extra].filter(Boolean).join('; ');
    }
    if (bench.name === 'paced-latency') {
      row.extra = `interval ${vars.INTERVAL} ns (${Math.round(1e9 / Number(vars.INTERVAL))} ev/s offered); p99 ${r.latency_ns.p99 < 1e6 ? '<' : '>='} 1 ms`;
    }
    if (bench.name === 'soak-windows') {
      // flat: the last tenth of the window against its second tenth (the first holds the warm-up's tail)
      const rss = child.rssInWindow(r.seconds);
      const part = (lo: number, hi: number) => {
        const xs = rss.filter(([t]) => t >= lo * r.seconds && t < hi * r.seconds).map(([, b]) => b);
        return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined;
      };
      const [early, late] = [part(0.1, 0.2), part(0.9, 1.01)];
      row.extra = [
        `${secs} s; RSS ${mb(early)} at 10-20 % of the window, ${mb(late)} at 90-100 %${early && late ? ` (${late > early ? '+' : ''}${(((late - early) / early) * 100).toFixed(0)} %: ${late <= early * 1.1 ? 'flat, no growth past 10 %' : 'grew'})` : ''}`,
        row.extra,
      ]
        .filter(Boolean)
        .join('; ');
    }
    if (bench.name === 'soak')
      row.extra = [`${secs} s; peak RSS ${r.peak_rss_bytes < 200 * 1048576 ? '<' : '>='} 200 MB`, row.extra].filter(Boolean).join('; ');
    return row;
  }

  async runSlowSink(bench: Bench): Promise<Row> {
    const secs = Math.min(SECS, 8);
    const { out } = await runChild([join(__dirname, 'slow-sink.js')], (secs + 60) * 1000, {
      ...process.env,
      BENCH_SLOW_SECS: String(secs),
      BENCH_DATA: dataPath(),
      EDDY_LOG: process.env.EDDY_LOG ?? 'warn',
    });
    const r = jsonLine(out, 'exactly_once') as SlowSinkReport;
    return {
      name: bench.name,
      status: r.exactly_once ? 'ok' : 'failed',
      message: r.exactly_once ? undefined : `delivery check failed: ${r.problems.join('; ')}`,
      eps: r.events_per_second,
      mbps: r.megabytes_per_second,
      p50: r.latency_ns.p50,
      p99: r.latency_ns.p99,
      p999: r.latency_ns.p999,
      rss: r.peak_rss_bytes,
      extra: `${r.delivered} delivered exactly once of ${r.read} read; max in flight ${r.max_in_flight}; breaker triggered ${r.triggers}x; RSS ${mb(r.rss_first_bytes)} -> ${mb(r.rss_last_bytes)}`,
      report: r,
    };
  }

  /** Start-up time: its own table, and a summary line in the main one. */
  async runStartup(bench: Bench): Promise<Row> {
    const startup = await import('./startup');
    const runs = startup.runsFromEnv();
    const rows = await startup.measureStartup(startup.startupTargets(EDDY), runs);
    const eddy = startup.summarise(rows[1]);
    return {
      name: bench.name,
      status: 'ok',
      rss: eddy.rssMedianBytes,
      extra: startup.startupSummaryLine(rows),
      detail: [startup.startupTable(rows), startup.caCertsNote(rows)].filter(Boolean).join('\n'),
      report: rows,
    };
  }

  /** The peers comparison: a skip row without TREMOR_BIN / BENTHOS_BIN. */
  async runPeers(bench: Bench): Promise<Row> {
    const peers = await import('./peers');
    const result = await peers.main(EDDY, this.dir);
    if (result.skipped) return { name: bench.name, status: 'skipped', message: result.skipped };
    return { name: bench.name, status: 'ok', extra: 'see the peers table below', detail: result.table, report: result.rows };
  }

  /** A network benchmark: its module measures eddy and its raw server in the same run. */
  async runScript(bench: Bench): Promise<Row> {
    if (bench.script === 'kafka') return this.runKafka(bench);
    const r: ScriptResult =
      bench.script === 'rest-echo'
        ? fromRestEcho(await (await import('./rest-echo')).main())
        : bench.script === 'postgres-sink' || bench.script === 'elastic-sink'
          ? await (await import('./sinks')).main(bench.script === 'postgres-sink' ? 'postgres' : 'elastic')
          : await (await import('./tcp-ingest')).main();
    return {
      name: bench.name,
      status: 'ok',
      eps: r.eddy.events_per_second,
      mbps: r.eddy.megabytes_per_second,
      p99: r.eddy.p99_ns,
      rss: r.eddy.peak_rss_bytes,
      rawEps: r.raw.events_per_second,
      ratio: r.ratio,
      cpuRatio: r.cpu_ratio,
      load: r.load_average,
      report: r,
    };
  }

  /**
   * kafka and kafka-window: the first of them run starts bench/kafka.ts for
   * both (BENCH_KAFKA_FLOWS sets their order), the other reads its row.
   */
  async runKafka(bench: Bench): Promise<Row> {
    const flowOf = (name: string) => (name === 'kafka-window' ? 'window' : 'passthrough');
    this.kafka ??= import('./kafka').then((k) => k.main(process.env.BENCH_KAFKA_FLOWS ? undefined : this.kafkaRows.map(flowOf)));
    const r = await this.kafka;
    const flow = r[flowOf(bench.name)];
    if (!flow) throw new Error(`bench/kafka.ts measured no ${flowOf(bench.name)} flow (BENCH_KAFKA_FLOWS)`);
    const e = flow.eddy;
    const raw = Math.max(...r.raw.map((x) => x.events_per_second));
    const mbs = (b: number) => `${Math.round(b / 1048576)} MB`;
    return {
      name: bench.name,
      status: 'ok',
      eps: e.events_per_second,
      p50: e.paced ? e.paced.p50_ms * 1e6 : undefined,
      p99: e.paced ? e.paced.p99_ms * 1e6 : undefined,
      rss: e.peak_rss_bytes,
      rawEps: raw,
      ratio: flow.ratio,
      cpuRatio: flow.cpu_ratio,
      load: e.load_average,
      extra: [
        `${r.events.toLocaleString('en-US')} events, ${e.seconds.toFixed(1)} s; eddy ${e.cpu_s_per_million?.toFixed(2) ?? '-'} CPU-s per million, relay ${r.raw.map((x) => x.cpu_s_per_million?.toFixed(2) ?? '-').join(' / ')} (before / after: ${r.raw.map((x) => count(x.events_per_second)).join(' / ')} ev/s)`,
        e.paced ? `latency at ${count(e.paced.rate)} ev/s offered (${count(e.paced.reached)} reached)` : undefined,
        e.soak ? `RSS over ${e.soak.seconds} s: min ${mbs(e.soak.min_bytes)}, max ${mbs(e.soak.max_bytes)}, last ${mbs(e.soak.last_bytes)}` : undefined,
        `load average ${e.load_average.toFixed(1)}; eddy on ${r.eddy_client}`,
      ]
        .filter(Boolean)
        .join('; '),
      report: r,
    };
  }

  async run(bench: Bench): Promise<Row> {
    process.stderr.write(`running ${bench.name}...\n`);
    try {
      const row = bench.file
        ? await this.runConfig(bench)
        : bench.own === 'startup'
          ? await this.runStartup(bench)
          : bench.own === 'peers'
            ? await this.runPeers(bench)
            : bench.script
              ? await this.runScript(bench)
              : await this.runSlowSink(bench);
      process.stderr.write(`  ${row.status === 'ok' ? summaryLine(row) : row.message}\n`);
      return row;
    } catch (err) {
      const message = (err as Error).message;
      process.stderr.write(`  failed: ${message}\n`);
      return { name: bench.name, status: 'failed', message };
    }
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function mb(bytes: number | undefined): string {
  return bytes === undefined ? '-' : `${(bytes / 1048576).toFixed(0)} MB`;
}

function latency(ns: number | undefined): string {
  if (ns === undefined) return '-';
  if (ns < 1e3) return `${ns} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(2)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

function count(n: number | undefined): string {
  return n === undefined ? '-' : Math.round(n).toLocaleString('en-US');
}

function summaryLine(r: Row): string {
  return `${count(r.eps)} ev/s${r.ratio !== undefined ? `, raw ${count(r.rawEps)} ev/s, ratio ${r.ratio.toFixed(2)}` : ''}`;
}

export function table(rows: Row[]): string {
  const head = ['benchmark', 'events/s', 'MB/s', 'p50', 'p99', 'p99.9', 'peak RSS', 'raw events/s', 'eddy/raw', 'per CPU-s'];
  const body = rows.map((r) =>
    r.status !== 'ok'
      ? [r.name, r.message ?? r.status]
      : [
          r.name,
          count(r.eps),
          r.mbps === undefined ? '-' : r.mbps.toFixed(1),
          latency(r.p50),
          latency(r.p99),
          latency(r.p999),
          mb(r.rss),
          count(r.rawEps),
          r.ratio === undefined ? '-' : r.ratio.toFixed(2),
          r.cpuRatio === undefined ? '-' : r.cpuRatio.toFixed(2),
        ],
  );
  const widths = head.map((h, i) => Math.max(h.length, ...body.filter((b) => b.length === head.length).map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells.length === head.length
      ? cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
      : `${cells[0].padEnd(widths[0])}  ${cells[1]}`;
  const out = [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
  const notes = rows.filter((r) => r.status === 'ok' && r.extra).map((r) => `  ${r.name}: ${r.extra}`);
  const details = rows.filter((r) => r.detail).map((r) => `\n${r.name}:\n${r.detail}`);
  return [...out, ...(notes.length ? ['', ...notes] : []), ...details].join('\n');
}

async function main(): Promise<number> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}\n`);
    return 2;
  }
  const selected = names.length > 0 ? BENCHES.filter((b) => names.includes(b.name)) : BENCHES.filter((b) => !b.optIn);
  process.stderr.write(`eddy bench: ${SECS} s measured after ${WARMUP} s warm-up per benchmark, raw baselines ${RAW_SECS} s; data ${dataPath()}\n`);
  const header = `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average at start ${loadavg()[0].toFixed(1)}`;
  const runner = new Runner();
  runner.kafkaRows = selected.filter((b) => b.script === 'kafka').map((b) => b.name);
  try {
    for (const bench of selected) runner.rows.push(await runner.run(bench));
  } finally {
    runner.cleanup();
  }
  process.stdout.write(`\n${header}\n` + table(runner.rows) + '\n');
  process.stdout.write(
    'eddy/raw: events/s over the faster of the raw runs just before and after; per CPU-s: the same ratio in events per CPU-second (eddy: /proc samples over the measured window; raw: its own cpuUsage)\n',
  );
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(runner.rows, null, 2) + '\n');
  return runner.rows.some((r) => r.status === 'failed') ? 1 : 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
