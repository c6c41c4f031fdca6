/**
 * The rest linked echo benchmark: `wrk` POSTs one JSON body over and over
 * (loopback, keep-alive, BENCH_CONNS connections, one wrk thread) against
 *
 *   - eddy: `node bin/eddy server run -f <tmp config> --no-api` with a linked
 *     rest onramp -> system::passthrough -> back to the onramp, which answers
 *     every request with its body decoded and encoded again (json);
 *   - raw: a bare node:http server in its own process that reads the body,
 *     JSON.parse, JSON.stringify, answers 200: the least an echo must do.
 *
 * and prints requests/s and p99 latency of both and eddy/raw (target >= 0.6),
 * also per CPU-second of the server process (less moved by other load). The
 * two alternate for BENCH_ROUNDS rounds; the best run of each counts.
 *
 *   npx tsc -p . && node dist/bench/rest-echo.js
 *
 * Environment: BENCH_SECS (measured seconds, 8), BENCH_ROUNDS (2), BENCH_WARMUP (seconds of
 * wrk before each measured run, 2), BENCH_CONNS (wrk connections, 64),
 * BENCH_DATA (the JSON line sent is the first of this file; default
 * bench/data/data.json.xz, kept in the repository), BENCH_EDDY (another build's bin/eddy),
 * BENCH_NODE_ARGS (node flags for the eddy process, e.g. --cpu-prof),
 * BENCH_JSON (also write the result as JSON to this file).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO, dataPath, envNumber, loadLines, workDir } from './data';
import { cpuSeconds, freePort } from './child';

export interface WrkResult {
  requestsPerSecond: number;
  /** requests answered in the measured run */
  requests: number;
  /** CPU seconds the server process used in the measured run (Linux /proc; undefined elsewhere) */
  cpuSeconds?: number;
  /** requests per CPU-second of the server: what an echo costs, little moved by other load on the machine */
  requestsPerCpuSecond?: number;
  /** latency percentiles in ms */
  p50: number;
  p99: number;
  /** answers that were not 2xx/3xx, plus socket errors */
  errors: number;
}

export interface RestEchoResult {
  eddy: WrkResult;
  raw: WrkResult;
  /** eddy/raw requests per second */
  ratio: number;
  /** eddy/raw requests per CPU-second (best run of each) */
  cpuRatio?: number;
  connections: number;
  seconds: number;
  bodyBytes: number;
}

const WRK = '/usr/bin/wrk';
const EDDY = process.env.BENCH_EDDY ?? join(REPO, 'bin', 'eddy');

/** The raw baseline, run as `node rest-echo.js raw-server PORT` in a process of its own. */
function rawServer(port: number): void {
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.from(JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  server.listen(port, '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
}

/** POSTs `body` until the server answers 200 (it is up), for at most `ms`. */
async function waitUp(port: number, body: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', () => resolve(false));
      req.end(body);
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing answered 200 on port ${port} within ${ms} ms`);
}

function start(args: string[]): ChildProcess {
  const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, EDDY_LOG: 'warn' } });
  child.stderr.setEncoding('utf8').on('data', (d: string) => process.stderr.write(d));
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

function wrk(port: number, script: string, connections: number, seconds: number): Promise<WrkResult> {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `http://127.0.0.1:${port}/`];
  return new Promise((resolve, reject) => {
    execFile(WRK, args, { timeout: (seconds + 30) * 1000 }, (err, stdout) => {
      if (err) return reject(new Error(`wrk ${args.join(' ')}: ${err.message}`));
      resolve(parseWrk(stdout));
    });
  });
}

/** requests/s, percentiles and errors from wrk's --latency output. */
export function parseWrk(out: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!rps) throw new Error(`no Requests/sec in wrk output: ${out}`);
  const percentile = (p: string) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
    if (!m) return NaN;
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const total = /(\d+) requests in/.exec(out);
  return {
    requestsPerSecond: Number(rps[1]),
    requests: total ? Number(total[1]) : 0,
    p50: percentile('50'),
    p99: percentile('99'),
    errors: (non2xx ? Number(non2xx[1]) : 0) + socketErrors,
  };
}

/** Warm up, then one measured wrk run against `server` listening on `port`. */
async function measure(
  server: ChildProcess,
  port: number,
  body: string,
  script: string,
  connections: number,
  seconds: number,
  warmup: number,
): Promise<WrkResult> {
  await waitUp(port, body, 20000);
  if (warmup > 0) await wrk(port, script, connections, warmup);
  const cpuBefore = cpuSeconds(server.pid);
  const result = await wrk(port, script, connections, seconds);
  const cpuAfter = cpuSeconds(server.pid);
  if (cpuBefore !== undefined && cpuAfter !== undefined && cpuAfter > cpuBefore) {
    result.cpuSeconds = cpuAfter - cpuBefore;
    result.requestsPerCpuSecond = result.requests / result.cpuSeconds;
  }
  return result;
}

async function rawRun(body: string, script: string, connections: number, seconds: number, warmup: number): Promise<WrkResult> {
  const port = await freePort();
  const child = start([__filename, 'raw-server', String(port)]);
  try {
    return await measure(child, port, body, script, connections, seconds, warmup);
  } finally {
    await stop(child);
  }
}

async function eddyRun(dir: string, body: string, script: string, connections: number, seconds: number, warmup: number): Promise<WrkResult> {
  const port = await freePort();
  const config = join(dir, 'rest-echo.yaml');
  writeFileSync(
    config,
    `onramp:
  - id: web
    type: rest
    linked: true
    config: { host: 127.0.0.1, port: ${port} }
binding:
  - id: echo
    links:
      "/onramp/web/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/onramp/web/{instance}/in"]
mapping:
  /binding/echo/main: { instance: main }
`,
  );
  const child = start([...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), EDDY, 'server', 'run', '-f', config, '--no-api']);
  try {
    return await measure(child, port, body, script, connections, seconds, warmup);
  } finally {
    await stop(child);
  }
}

export async function main(): Promise<RestEchoResult> {
  const seconds = envNumber('BENCH_SECS', 8);
  const warmup = envNumber('BENCH_WARMUP', 2);
  const connections = envNumber('BENCH_CONNS', 64);
  const dir = workDir();
  // a real event from the sample data kept in the repository
  const body = (await loadLines(dataPath()))[0].toString('utf8');
  const script = join(dir, 'rest-echo.lua');
  writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\n`);

  // alternate raw and eddy; the best run of each counts (a loaded machine only ever makes a run slower)
  const rounds = Math.max(1, envNumber('BENCH_ROUNDS', 2));
  const raws: WrkResult[] = [];
  const eddys: WrkResult[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      raws.push(await rawRun(body, script, connections, seconds, warmup));
      eddys.push(await eddyRun(dir, body, script, connections, seconds, warmup));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const best = (runs: WrkResult[]) => runs.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
  const bestCpu = (runs: WrkResult[]) => Math.max(...runs.map((r) => r.requestsPerCpuSecond ?? NaN));
  const raw = best(raws);
  const eddy = best(eddys);
  const result: RestEchoResult = { eddy, raw, ratio: eddy.requestsPerSecond / raw.requestsPerSecond, connections, seconds, bodyBytes: Buffer.byteLength(body) };
  const cpuRatio = bestCpu(eddys) / bestCpu(raws);
  if (Number.isFinite(cpuRatio)) result.cpuRatio = cpuRatio;

  const perCpu = (r: WrkResult) => (r.requestsPerCpuSecond === undefined ? '' : `   ${r.requestsPerCpuSecond.toFixed(0).padStart(6)} req/CPU-s`);
  const row = (name: string, r: WrkResult) =>
    `${name.padEnd(6)} ${r.requestsPerSecond.toFixed(0).padStart(9)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms${perCpu(r)}${r.errors ? `   errors ${r.errors}` : ''}`;
  process.stdout.write(
    [
      `rest linked echo: wrk -t1 -c${connections} -d${seconds}s, POST ${result.bodyBytes}-byte JSON body, loopback`,
      row('eddy', eddy) + `   (runs: ${eddys.map((r) => r.requestsPerSecond.toFixed(0)).join(', ')})`,
      row('raw', raw) + `   (runs: ${raws.map((r) => r.requestsPerSecond.toFixed(0)).join(', ')})`,
      `eddy/raw ${result.ratio.toFixed(2)} req/s (target >= 0.6)${result.cpuRatio === undefined ? '' : `, ${result.cpuRatio.toFixed(2)} per CPU-s`}; load average ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs`,
      '',
    ].join('\n'),
  );
  return result;
}

if (require.main === module) {
  if (process.argv[2] === 'raw-server') rawServer(Number(process.argv[3]));
  else
    main().then(
      (r) => {
        if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(r, null, 2));
        process.exit(r.eddy.errors > 0 ? 1 : 0);
      },
      (err: unknown) => {
        process.stderr.write(`rest-echo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exit(1);
      },
    );
}
