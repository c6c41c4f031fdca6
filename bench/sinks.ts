/**
 * Sinks: the postgres and elastic offramps beside their clients' raw loops,
 * on the real servers, in the same run (raw before and after eddy; the
 * faster raw run counts).
 *
 *   scripts/services start postgres elastic
 *   npx tsc -p . && node_modules/.bin/node dist/bench/sinks.js [postgres] [elastic]
 *
 * - eddy: `node bin/eddy server run -f <tmp.yaml> --no-api`: blaster (json
 *   codec, a file of lines replayed in a loop) -> [elastic: runtime::cel
 *   setting meta `index`] -> generic::batch (BENCH_SINK_BATCH, 100; 10 ms)
 *   -> the offramp with concurrency 4.
 * - raw (postgres): a child process with a `pg` Pool of 4 that parses each
 *   line (JSON.parse) and sends BENCH_SINK_BATCH rows as one multi-row
 *   INSERT with bound parameters, 4 INSERTs in flight: the same statements
 *   eddy sends, written by hand.
 * - raw (elastic): a child process with the @elastic/elasticsearch client
 *   that parses each line and sends BENCH_SINK_BATCH documents with
 *   `client.bulk({operations})`, 4 bulks in flight.
 * - Measured: after the first rows arrive and BENCH_WARMUP (3) s more, rows
 *   written over BENCH_SECS (10) s (postgres: the table's id sequence;
 *   elastic: the index's `indexing.index_total`), and the CPU the side's
 *   process used meanwhile (/proc). The table is UNLOGGED and the index has
 *   no replicas and refresh_interval 30s, so the servers spend less of the
 *   two cores the clients share with them; both sides see the same servers.
 *
 * BENCH_NODE_ARGS: node flags for both sides' processes (`--cpu-prof --cpu-prof-dir=DIR`);
 * BENCH_EDDY: the bin/eddy of another build (to compare builds).
 * `main()` returns { eddy, raw, ratio, cpu_ratio, load_average } per sink, like
 * bench/tcp-ingest.ts. BENCH_JSON writes the results to a file.
 * Servers: EDDY_POSTGRES_HOST/PORT (127.0.0.1:5432), EDDY_ELASTIC_URL (http://127.0.0.1:9200).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as PgClient, Pool } from 'pg';
import { Client as ElasticClient } from '@elastic/elasticsearch';
import { cpuSeconds } from './child';
import { REPO, dataPath, envNumber, loadLines } from './data';

export type SinkName = 'postgres' | 'elastic';

export interface SideResult {
  side: 'raw' | 'eddy';
  rows: number;
  seconds: number;
  rows_per_second: number;
  cpu_seconds: number;
  /** CPU seconds per million rows */
  cpu_per_million: number;
}

export interface SinkResult {
  sink: SinkName;
  batch: number;
  runs: SideResult[];
  /** as bench/run.ts's script rows read it */
  eddy: { events_per_second: number };
  raw: { events_per_second: number };
  ratio: number;
  cpu_ratio: number;
  load_average: number;
}

const BATCH = Math.round(envNumber('BENCH_SINK_BATCH', 100, 1));
const CONCURRENCY = 4;
const SECS = envNumber('BENCH_SECS', 10, 1);
const WARMUP = envNumber('BENCH_WARMUP', 3, 0);
const PG = {
  host: process.env.EDDY_POSTGRES_HOST ?? '127.0.0.1',
  port: Number(process.env.EDDY_POSTGRES_PORT ?? 5432),
  user: 'postgres',
  database: 'postgres',
};
const ELASTIC = process.env.EDDY_ELASTIC_URL ?? 'http://127.0.0.1:9200';
/** BENCH_EDDY: another build's bin/eddy, to compare builds with the same raw loops */
const EDDY = process.env.BENCH_EDDY ?? join(REPO, 'bin', 'eddy');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- data

/** The columns of the postgres rows: name, fieldType, SQL type. */
const COLUMNS: [string, string, string][] = [
  ['id', 'INT8', 'int8'],
  ['host', 'TEXT', 'text'],
  ['level', 'TEXT', 'text'],
  ['latency_ms', 'FLOAT8', 'float8'],
  ['ok', 'BOOL', 'bool'],
  ['at', 'TIMESTAMPTZ', 'timestamptz'],
  ['message', 'TEXT', 'text'],
];

/** 1,000 events of field records, one JSON line each (compact, so the json codec can keep the frame). */
function postgresLines(): string[] {
  const levels = ['info', 'warn', 'error', 'debug'];
  return Array.from({ length: 1000 }, (_, i) => {
    const values: unknown[] = [
      i,
      `web-${i % 17}`,
      levels[i % 4],
      (i * 7.31) % 500,
      i % 5 !== 0,
      new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      `GET /api/v1/items/${i} 200 ${(i * 37) % 9000} bytes`,
    ];
    const event: Record<string, unknown> = {};
    COLUMNS.forEach(([name, fieldType], c) => (event[name] = { fieldType, name, value: values[c] }));
    return JSON.stringify(event);
  });
}

/** The elastic documents: bench/data's sample events (~1 KB each). */
async function elasticLines(): Promise<string[]> {
  return (await loadLines(dataPath())).map((l) => l.toString('utf8'));
}

// ---------------------------------------------------------------- raw loops (child processes)

async function rawPostgres(file: string, table: string): Promise<void> {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const pool = new Pool({ ...PG, max: CONCURRENCY });
  const names = COLUMNS.map(([name]) => name);
  const tuples = Array.from({ length: BATCH }, (_, r) => `(${names.map((_, c) => `$${r * names.length + c + 1}`).join(', ')})`);
  const text = `INSERT INTO ${table} (${names.join(', ')}) VALUES ${tuples.join(', ')}`;
  let next = 0;
  let stop = false;
  process.once('SIGTERM', () => (stop = true));
  const worker = async () => {
    while (!stop) {
      const values: unknown[] = [];
      for (let r = 0; r < BATCH; r++) {
        const event = JSON.parse(lines[next++ % lines.length]) as Record<string, { value: unknown }>;
        for (const name of names) values.push(event[name].value);
      }
      // a named statement, as eddy sends: parsed and planned once per connection, then only bound and executed
      await pool.query({ name: 'raw_insert', text, values });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await pool.end();
}

async function rawElastic(file: string, index: string): Promise<void> {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const client = new ElasticClient({ node: ELASTIC });
  let next = 0;
  let stop = false;
  process.once('SIGTERM', () => (stop = true));
  const worker = async () => {
    while (!stop) {
      const operations: unknown[] = [];
      for (let r = 0; r < BATCH; r++) operations.push({ index: { _index: index } }, JSON.parse(lines[next++ % lines.length]));
      // a cluster short of memory answers 429 (circuit_breaking_exception) under load: try the same bulk again, as a client would
      for (;;) {
        try {
          const response = await client.bulk({ operations });
          if (response.errors) throw new Error(`bulk item failed: ${JSON.stringify(response.items.find((i) => i.index?.error))}`);
          break;
        } catch (err) {
          if ((err as { meta?: { statusCode?: number } }).meta?.statusCode !== 429) throw err;
          await sleep(100);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await client.close();
}

// ---------------------------------------------------------------- eddy's side

function eddyConfig(sink: SinkName, file: string, target: string): string {
  const offramp =
    sink === 'postgres'
      ? `{ host: "${PG.host}", port: ${PG.port}, user: postgres, password: "", dbname: postgres, table: "${target}", concurrency: ${CONCURRENCY} }`
      : `{ nodes: ["${ELASTIC}"], concurrency: ${CONCURRENCY} }`;
  // meta only: the events stay unread frames through runtime::cel
  const route = sink === 'elastic' ? `      - { id: route, type: "runtime::cel", config: { meta: { index: '"${target}"' } } }\n` : '';
  return `onramp:
  - id: blaster
    type: blaster
    codec: json
    config: { source: "${file}" }
offramp:
  - id: sink
    type: ${sink}
    config: ${offramp}
pipeline:
  - id: batched
    interface: { inputs: [in], outputs: [out] }
    nodes:
${route}      - { id: batch, type: "generic::batch", config: { count: ${BATCH}, timeout: 10 } }
    links:
      in: [${sink === 'elastic' ? 'route' : 'batch'}]
${sink === 'elastic' ? '      route: [batch]\n' : ''}      batch: [out]
binding:
  - id: bench
    links:
      "/onramp/blaster/{instance}/out": ["/pipeline/batched/{instance}/in"]
      "/pipeline/batched/{instance}/out": ["/offramp/sink/{instance}/in"]
mapping:
  /binding/bench/main: { instance: main }
`;
}

// ---------------------------------------------------------------- the parent

interface Target {
  /** a fresh, empty table or index */
  reset(): Promise<void>;
  /** rows written so far */
  count(): Promise<number>;
  drop(): Promise<void>;
  close(): Promise<void>;
}

async function postgresTarget(table: string): Promise<Target> {
  const client = new PgClient(PG);
  await client.connect();
  return {
    async reset() {
      await client.query(`DROP TABLE IF EXISTS ${table}`);
      // UNLOGGED: no WAL, so the server takes less of the machine; the id sequence counts the rows inserted
      const columns = COLUMNS.map(([name, , type]) => `${name} ${type}`).join(', ');
      await client.query(`CREATE UNLOGGED TABLE ${table} (seq bigserial, ${columns})`);
    },
    async count() {
      const { rows } = await client.query<{ last_value: string; is_called: boolean }>(`SELECT last_value, is_called FROM ${table}_seq_seq`);
      return rows[0].is_called ? Number(rows[0].last_value) : 0;
    },
    async drop() {
      await client.query(`DROP TABLE IF EXISTS ${table}`);
    },
    close: () => client.end(),
  };
}

function elasticTarget(index: string): Target {
  const client = new ElasticClient({ node: ELASTIC });
  return {
    async reset() {
      await client.indices.delete({ index, ignore_unavailable: true });
      await client.indices.create({ index, settings: { number_of_replicas: 0, refresh_interval: '30s' } });
    },
    async count() {
      const stats = await client.indices.stats({ index, metric: 'indexing' });
      return stats._all.primaries?.indexing?.index_total ?? 0;
    },
    async drop() {
      await client.indices.delete({ index, ignore_unavailable: true });
    },
    close: () => client.close(),
  };
}

/** Runs one side until measured: rows and CPU over SECS after the warm-up. */
async function measure(side: 'raw' | 'eddy', args: string[], target: Target): Promise<SideResult> {
  await target.reset();
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    env: { ...process.env, EDDY_LOG: process.env.EDDY_LOG ?? 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let exited = false;
  const closed = new Promise<void>((r) => child.once('close', () => ((exited = true), r())));
  try {
    const deadline = Date.now() + 30_000;
    while ((await target.count()) === 0) {
      if (exited || Date.now() > deadline) throw new Error(`${side}: no rows written (${exited ? 'exited' : 'after 30 s'}): ${stderr.trim().slice(-500)}`);
      await sleep(100);
    }
    await sleep(WARMUP * 1000);
    const sample = async () => ({ t: performance.now(), cpu: cpuSeconds(child.pid) ?? NaN, n: await target.count() });
    const start = await sample();
    await sleep(SECS * 1000);
    const end = await sample();
    if (exited) throw new Error(`${side} exited during the measurement: ${stderr.trim().slice(0, 800)}`);
    const rows = end.n - start.n;
    const seconds = (end.t - start.t) / 1000;
    const cpu = end.cpu - start.cpu;
    return { side, rows, seconds, rows_per_second: rows / seconds, cpu_seconds: cpu, cpu_per_million: (cpu / rows) * 1e6 };
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await closed;
    clearTimeout(killer);
  }
}

export async function runSink(sink: SinkName, dir: string): Promise<SinkResult> {
  const load = loadavg()[0];
  const name = `bench_sink_${process.pid}`;
  const file = join(dir, `${sink}.json`);
  writeFileSync(file, (sink === 'postgres' ? postgresLines() : await elasticLines()).join('\n') + '\n');
  const configFile = join(dir, `${sink}.yaml`);
  writeFileSync(configFile, eddyConfig(sink, file, name));
  const target = sink === 'postgres' ? await postgresTarget(name) : elasticTarget(name);
  // BENCH_NODE_ARGS: node flags for both sides' processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const raw = [...nodeArgs, __filename, `raw-${sink}`, file, name];
  const eddy = [...nodeArgs, EDDY, 'server', 'run', '-f', configFile, '--no-api'];
  const runs: SideResult[] = [];
  try {
    for (const [side, args] of [
      ['raw', raw],
      ['eddy', eddy],
      ['raw', raw],
    ] as const) {
      const r = await measure(side, [...args], target);
      process.stderr.write(`  ${sink} ${side}: ${Math.round(r.rows_per_second)} rows/s, ${r.cpu_per_million.toFixed(1)} CPU-s per million\n`);
      runs.push(r);
    }
  } finally {
    await target.drop().catch(() => undefined);
    await target.close();
  }
  const eddyRun = runs[1];
  const raws = runs.filter((r) => r.side === 'raw');
  const rawEps = Math.max(...raws.map((r) => r.rows_per_second));
  const rawCpu = Math.min(...raws.map((r) => r.cpu_per_million));
  return {
    sink,
    batch: BATCH,
    runs,
    eddy: { events_per_second: eddyRun.rows_per_second },
    raw: { events_per_second: rawEps },
    ratio: eddyRun.rows_per_second / rawEps,
    cpu_ratio: rawCpu / eddyRun.cpu_per_million,
    load_average: load,
  };
}

export function table(results: SinkResult[]): string {
  const head = `${'sink'.padEnd(9)}  ${'side'.padEnd(10)}  ${'rows/s'.padStart(9)}  ${'CPU-s per million'.padStart(17)}`;
  const lines = [head, '-'.repeat(head.length)];
  for (const r of results) {
    for (const [i, run] of r.runs.entries()) {
      const side = run.side === 'raw' ? (i === 0 ? 'raw before' : 'raw after') : 'eddy';
      lines.push(
        `${r.sink.padEnd(9)}  ${side.padEnd(10)}  ${Math.round(run.rows_per_second).toLocaleString('en-US').padStart(9)}  ${run.cpu_per_million.toFixed(1).padStart(17)}`,
      );
    }
    lines.push(
      `${r.sink}: eddy/raw ${r.ratio.toFixed(2)} rows/s, ${r.cpu_ratio.toFixed(2)} rows per CPU-s (raw: the better of its two runs); batch ${r.batch}, concurrency ${CONCURRENCY}, load average at start ${r.load_average.toFixed(1)}`,
    );
  }
  return lines.join('\n');
}

/** For bench/run.ts: one sink's row. */
export async function main(sink: SinkName): Promise<SinkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'eddy-sink-bench-'));
  try {
    const result = await runSink(sink, dir);
    process.stderr.write(table([result]) + '\n');
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const [role, ...args] = process.argv.slice(2);
  const fail = (err: Error) => {
    process.stderr.write(`sinks bench ${role ?? ''}: ${err.stack ?? err.message}\n`);
    process.exit(1);
  };
  if (role === 'raw-postgres') rawPostgres(args[0], args[1]).then(() => process.exit(0), fail);
  else if (role === 'raw-elastic') rawElastic(args[0], args[1]).then(() => process.exit(0), fail);
  else {
    const sinks = (process.argv.length > 2 ? process.argv.slice(2) : ['postgres', 'elastic']) as SinkName[];
    const bad = sinks.filter((s) => s !== 'postgres' && s !== 'elastic');
    if (bad.length > 0) fail(new Error(`unknown sink ${bad.join(', ')}: postgres, elastic`));
    (async () => {
      process.stderr.write(`sinks: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg().join(' ')}, ${SECS} s after ${WARMUP} s warm-up\n`);
      const dir = mkdtempSync(join(tmpdir(), 'eddy-sink-bench-'));
      const results: SinkResult[] = [];
      try {
        for (const sink of sinks) results.push(await runSink(sink, dir));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      process.stdout.write(table(results) + '\n');
      if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(results, null, 2) + '\n');
    })().then(() => process.exit(0), fail);
  }
}
