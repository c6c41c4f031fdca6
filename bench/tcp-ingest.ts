/**
 * TCP ingest: JSON lines over loopback into eddy, beside a raw Node server
 * doing the same unavoidable work, in the same run.
 *
 *   npx tsc -p . && node dist/bench/tcp-ingest.js
 *
 * - eddy: `node bin/eddy server run -f <tmp.yaml> --no-api` with a tcp
 *   onramp (`preprocessors: [lines]`, json) -> system::passthrough ->
 *   blackhole (`structured: true`); its JSON report line is the result.
 * - raw: a plain `net` server in its own process that splits the lines,
 *   `JSON.parse`s and `JSON.stringify`s each (to bytes) and counts them over
 *   the same warm-up and measured window.
 * - Both are fed by the same client, a child process writing the lines of
 *   bench/data/tcp-lines.json (the first lines of data.json.xz) in a loop as
 *   fast as the socket takes them, on BENCH_TCP_CONNECTIONS connections.
 *
 * Prints events/s, MB/s (of the re-encoded JSON, as the blackhole counts
 * them), the CPU seconds each server used in its window, and eddy/raw both
 * per wall-clock second and per CPU-second (the latter moves much less
 * with other load on the machine). Environment: BENCH_SECS (8),
 * BENCH_WARMUP (2), BENCH_TCP_CONNECTIONS (1), BENCH_JSON (also write the
 * result as JSON to this file).
 *
 * The same file is the client and the raw server (`node tcp-ingest.js
 * client PORT SECONDS CONNECTIONS`, `node tcp-ingest.js raw PORT WARMUP
 * SECONDS`), so everything runs from one build.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlackholeReport } from '../src/connectors/blackhole/offramp';
import { freePort, runChild, type ChildResult } from './child';
import { REPO, envNumber } from './data';

export const LINES_FILE = join(REPO, 'bench', 'data', 'tcp-lines.json');

export interface ServerResult {
  events: number;
  bytes: number;
  seconds: number;
  events_per_second: number;
  megabytes_per_second: number;
  /** CPU seconds (user + system) the server process used in its measured window */
  cpu_seconds?: number;
  peak_rss_bytes?: number;
}

export interface TcpIngestResult {
  connections: number;
  eddy: ServerResult;
  raw: ServerResult;
  /** eddy events/s over raw events/s */
  ratio: number;
  /** eddy events per CPU-second over raw events per CPU-second */
  cpu_ratio?: number;
  load_average: number;
}

// ---------------------------------------------------------------- client

/** Writes the lines in a loop on `connections` sockets until `seconds` pass or the server goes away. */
async function client(port: number, seconds: number, connections: number): Promise<void> {
  const lines = readFileSync(LINES_FILE);
  // about 1 MB of whole lines per write, so the client's own cost is a few syscalls
  const chunk = Buffer.concat(Array.from({ length: Math.max(1, Math.round(1_048_576 / lines.length)) }, () => lines));
  const deadline = Date.now() + seconds * 1000;
  const one = async () => {
    const socket = await connectRetrying(port, deadline);
    if (!socket) return;
    await new Promise<void>((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket.destroy();
        resolve();
      };
      const timer = setTimeout(finish, Math.max(0, deadline - Date.now()));
      socket.on('error', finish);
      socket.on('close', finish);
      const pump = () => {
        while (!done && socket.write(chunk));
        if (!done) socket.once('drain', pump);
      };
      pump();
    });
  };
  await Promise.all(Array.from({ length: connections }, one));
}

/** Connects, retrying while the server starts; undefined if it never listens before the deadline. */
async function connectRetrying(port: number, deadline: number): Promise<Socket | undefined> {
  while (Date.now() < deadline) {
    const socket = await new Promise<Socket | undefined>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      s.once('error', () => resolve(undefined));
    });
    if (socket) return socket;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

// ---------------------------------------------------------------- raw server

/**
 * The raw baseline: split lines (carrying a partial line across reads),
 * then bytes -> text -> JSON.parse -> JSON.stringify -> bytes per line,
 * counted between `warmup` and `warmup + seconds` after it starts listening.
 */
function rawServer(port: number, warmup: number, seconds: number): Promise<ServerResult> {
  return new Promise((resolve, reject) => {
    let measuring = false;
    let events = 0;
    let bytes = 0;
    let t0 = 0;
    let cpu0 = process.cpuUsage();
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      let carry: Buffer | undefined;
      socket.on('data', (data: Buffer) => {
        let start = 0;
        for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, start)) {
          const piece = data.subarray(start, nl);
          const line = carry ? Buffer.concat([carry, piece]) : piece;
          carry = undefined;
          start = nl + 1;
          const out = Buffer.from(JSON.stringify(JSON.parse(line.toString('utf8'))), 'utf8');
          if (measuring) {
            events++;
            bytes += out.length;
          }
        }
        if (start < data.length) carry = carry ? Buffer.concat([carry, data.subarray(start)]) : Buffer.from(data.subarray(start));
      });
    });
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      setTimeout(() => {
        measuring = true;
        t0 = performance.now();
        cpu0 = process.cpuUsage();
      }, warmup * 1000);
      setTimeout(
        () => {
          measuring = false;
          const secs = (performance.now() - t0) / 1000;
          const cpu = process.cpuUsage(cpu0);
          for (const s of sockets) s.destroy();
          server.close();
          resolve({
            events,
            bytes,
            seconds: secs,
            events_per_second: events / secs,
            megabytes_per_second: bytes / secs / 1048576,
            cpu_seconds: (cpu.user + cpu.system) / 1e6,
            peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
          });
        },
        (warmup + seconds) * 1000,
      );
    });
  });
}

// ---------------------------------------------------------------- runner

/** Runs `node args...` with eddy's log at `warn`, sampling its CPU until a stdout line with `"key"` appears. */
function runNode(args: string[], key: string | undefined, timeoutMs: number): Promise<ChildResult> {
  return runChild(args, timeoutMs, { ...process.env, EDDY_LOG: process.env.EDDY_LOG ?? 'warn' }, key);
}

function jsonLine(out: string, key: string): unknown {
  for (const line of out.split('\n').reverse()) {
    if (!line.trim().startsWith('{')) continue;
    try {
      const v = JSON.parse(line) as Record<string, unknown>;
      if (key in v) return v;
    } catch {
      // not the report
    }
  }
  throw new Error(`no JSON line with "${key}" in: ${out.slice(0, 300)}`);
}

function eddyConfig(port: number, warmup: number, seconds: number): string {
  return `onramp:
  - id: tcp
    type: tcp
    codec: json
    preprocessors: [lines]
    config: { host: 127.0.0.1, port: ${port} }
offramp:
  - id: blackhole
    type: blackhole
    codec: json
    config: { warmup_secs: ${warmup}, stop_after_secs: ${seconds}, significant_figures: 2, structured: true }
binding:
  - id: bench
    links:
      "/onramp/tcp/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/blackhole/{instance}/in"]
mapping:
  /binding/bench/main: { instance: main }
`;
}

/** One server (eddy or raw) fed by one client process; the client outlives the server's window. */
async function measure(server: (port: number) => Promise<ServerResult>, warmup: number, seconds: number, connections: number): Promise<ServerResult> {
  const port = await freePort();
  const clientDone = runNode(
    [__filename, 'client', String(port), String(warmup + seconds + 30), String(connections)],
    undefined,
    (warmup + seconds + 60) * 1000,
  );
  try {
    return await server(port);
  } finally {
    await clientDone.catch(() => undefined);
  }
}

export async function main(): Promise<TcpIngestResult> {
  const seconds = envNumber('BENCH_SECS', 8);
  const warmup = envNumber('BENCH_WARMUP', 2);
  const connections = Math.max(1, Math.round(envNumber('BENCH_TCP_CONNECTIONS', 1)));
  const dir = mkdtempSync(join(tmpdir(), 'eddy-tcp-bench-'));
  const load = loadavg()[0];
  process.stderr.write(
    `tcp-ingest: ${seconds} s measured after ${warmup} s warm-up, ${connections} connection(s), ${LINES_FILE}\n` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${load.toFixed(1)}\n`,
  );
  try {
    const raw = await measure(
      async (port) => {
        const child = await runNode([__filename, 'raw', String(port), String(warmup), String(seconds)], undefined, (warmup + seconds + 60) * 1000);
        return jsonLine(child.out, 'events_per_second') as ServerResult;
      },
      warmup,
      seconds,
      connections,
    );
    const eddy = await measure(
      async (port) => {
        const path = join(dir, 'tcp-ingest.yaml');
        writeFileSync(path, eddyConfig(port, warmup, seconds));
        const child = await runNode([join(REPO, 'bin', 'eddy'), 'server', 'run', '-f', path, '--no-api'], 'events_per_second', (warmup + seconds + 60) * 1000);
        const r = jsonLine(child.out, 'events_per_second') as BlackholeReport;
        return {
          events: r.events,
          bytes: r.bytes,
          seconds: r.seconds,
          events_per_second: r.events_per_second,
          megabytes_per_second: r.megabytes_per_second,
          cpu_seconds: child.cpuInWindow(r.seconds),
          peak_rss_bytes: r.peak_rss_bytes,
        };
      },
      warmup,
      seconds,
      connections,
    );
    const result: TcpIngestResult = { connections, eddy, raw, ratio: eddy.events_per_second / raw.events_per_second, load_average: load };
    if (eddy.cpu_seconds && raw.cpu_seconds) result.cpu_ratio = eddy.events / eddy.cpu_seconds / (raw.events / raw.cpu_seconds);
    process.stdout.write(table(result) + '\n');
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function table(r: TcpIngestResult): string {
  const row = (name: string, s: ServerResult) =>
    [
      name.padEnd(5),
      Math.round(s.events_per_second).toLocaleString('en-US').padStart(12),
      s.megabytes_per_second.toFixed(1).padStart(8),
      (s.cpu_seconds === undefined ? '-' : (s.events / s.cpu_seconds).toFixed(0)).padStart(14),
      (s.peak_rss_bytes === undefined ? '-' : `${Math.round(s.peak_rss_bytes / 1048576)} MB`).padStart(9),
    ].join('  ');
  return [
    `${'side'.padEnd(5)}  ${'events/s'.padStart(12)}  ${'MB/s'.padStart(8)}  ${'events/CPU-s'.padStart(14)}  ${'peak RSS'.padStart(9)}`,
    row('eddy', r.eddy),
    row('raw', r.raw),
    `eddy/raw: ${r.ratio.toFixed(2)} (events/s), ${r.cpu_ratio === undefined ? '-' : r.cpu_ratio.toFixed(2)} (events per CPU-second); ${r.connections} connection(s), load average ${r.load_average.toFixed(1)}`,
  ].join('\n');
}

if (require.main === module) {
  const [role, ...args] = process.argv.slice(2);
  const fail = (err: Error) => {
    process.stderr.write(`tcp-ingest ${role ?? ''}: ${err.message}\n`);
    process.exit(1);
  };
  if (role === 'client') client(Number(args[0]), Number(args[1]), Number(args[2])).then(() => process.exit(0), fail);
  else if (role === 'raw')
    rawServer(Number(args[0]), Number(args[1]), Number(args[2])).then((r) => (process.stdout.write(JSON.stringify(r) + '\n'), process.exit(0)), fail);
  else main().then(() => undefined, fail);
}
