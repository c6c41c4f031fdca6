/**
 * Fuzz figures, against a real `eddy server run` child over loopback HTTP
 * and TCP.
 *
 * REST: a fixed number of generated requests (fuzz-gen.ts, fixed seed),
 * sent one at a time. Counted: statuses, 5xx, requests without an answer,
 * crashes of the server process (it is restarted and the run goes on).
 * After every failed request (4xx, 5xx or none) that was not a GET or
 * HEAD, the repository and the instance registry are read again (every
 * kind's list and every artefact's state) and compared with what they
 * were before it: a failed request must change nothing. While each
 * hostile body (deep nesting, megabytes, alias expansion) is in flight a
 * second connection asks for /version: its answer time says whether the
 * server kept serving.
 *
 * Mutated events: generated lines (the sample events intact, damaged byte
 * by byte, random JSON, random bytes, edge values) are written over
 * several connections, cut into random chunks, to a tcp onramp with the
 * `lines` preprocessor and the json codec, whose `out` and `err` ports go
 * to two blackholes. Every line is one frame, so out + err must equal the
 * lines sent; the oracle (strict UTF-8, then JSON.parse) says how many
 * should be on `out`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { freePort } from '../child';
import { loadLines } from '../data';
import { MetricsReader, REPO, envNumber, fill, sleep, startEddy, tempDir, waitFor, type EddyProcess } from './common';
import { HOSTILE, KINDS, generateLines, generateRequests, type FuzzLine, type FuzzRequest } from './fuzz-gen';

export interface HostileFigure {
  name: string;
  count: number;
  statuses: Record<string, number>;
  /** slowest answer to the hostile request itself */
  maxMs: number;
  /** slowest answer to GET /version asked 100 ms into it (when it took longer than that) */
  maxProbeMs?: number;
}

export interface RestFuzzResult {
  seed: number;
  requests: number;
  statuses: Record<string, number>;
  serverErrors: number;
  noAnswer: number;
  crashes: { afterRequest: number; exit: string; stderr: string }[];
  stateChecks: number;
  stateChanges: { request: string; status: string; before: string; after: string }[];
  /** requests that succeeded and changed the repository or registry (publish, activate, delete) */
  successfulChanges: number;
  latencyMs: { p50: number; p99: number; max: number; over1s: number };
  hostile: HostileFigure[];
  examples500: string[];
  seconds: number;
}

export interface EventFuzzResult {
  seed: number;
  lines: number;
  bytesSent: number;
  connections: number;
  /** bytes the onramp counted (its `ramp_bytes` metric) */
  bytesRead?: number;
  out?: number;
  err?: number;
  /** lines the oracle says are valid JSON */
  expectedOut: number;
  byKind: Record<string, { lines: number; valid: number }>;
  /** the most frequent error messages on `err` (numbers replaced by N) */
  errors?: { message: string; count: number }[];
  /** lines the oracle calls valid JSON that went to `err`, and the reverse: where eddy's json codec and JSON.parse differ */
  rejectedValid?: number;
  acceptedInvalid?: number;
  disagreements?: string[];
  /** the child exited during the run */
  crashed?: string;
  seconds: number;
}

export interface FuzzResult {
  rest: RestFuzzResult;
  events: EventFuzzResult;
}

export async function runFuzz(log: (line: string) => void): Promise<FuzzResult> {
  const seed = envNumber('RELIABILITY_FUZZ_SEED', 11);
  const rest = await restFuzz(envNumber('RELIABILITY_FUZZ_REQUESTS', 5000, 1), seed, log);
  const events = await eventFuzz(envNumber('RELIABILITY_FUZZ_LINES', 20000, 1), seed, log);
  return { rest, events };
}

// ---- REST ----

const BASE_CONFIG = `onramp:
  - id: ticks
    type: metronome
    config: { interval: 1000 }
offramp:
  - id: console
    type: debug
pipeline:
  - id: route
    interface: { inputs: [in], outputs: [out] }
    nodes: [{ id: pass, type: passthrough }]
    links: { in: [pass], pass: [out] }
binding:
  - id: flow
    links:
      "/onramp/ticks/{instance}/out": ["/pipeline/route/{instance}/in"]
      "/pipeline/route/{instance}/out": ["/offramp/console/{instance}/in"]
mapping:
  /binding/flow/main: { instance: main }
`;

interface Answer {
  status: number | 'none';
  text: string;
  ms: number;
}

const REQUEST_TIMEOUT_MS = 15000;

/** One HTTP request on loopback; never rejects: a request without an answer is `status: 'none'`. */
function send(port: number, agent: Agent, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (status: Answer['status'], text: string) => {
      if (done) return;
      done = true;
      resolve({ status, text, ms: performance.now() - started });
    };
    let req;
    try {
      req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          headers: body ? { ...headers, 'content-length': String(body.length) } : headers,
          agent,
          timeout: REQUEST_TIMEOUT_MS,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => finish(res.statusCode ?? 'none', Buffer.concat(chunks).toString('utf8')));
          res.on('error', () => finish(res.statusCode ?? 'none', ''));
        },
      );
    } catch (err) {
      // the client refused to build it (a header value it considers invalid): not a request the server saw
      finish('none', `client: ${(err as Error).message}`);
      return;
    }
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => finish('none', err.message));
    req.end(body);
  });
}

class Server {
  proc!: EddyProcess;
  port = 0;
  readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });
  readonly probeAgent = new Agent({ keepAlive: false });

  constructor(private readonly config: string) {}

  async start(): Promise<void> {
    this.port = await freePort();
    this.proc = startEddy(['server', 'run', '-f', this.config, '--api-port', String(this.port)]);
    await waitFor(() => this.proc.stderrTail().includes('Listening at') || this.proc.exit !== undefined, 60000, 'the API to listen');
    if (this.proc.exit) throw new Error(`the server did not start: ${this.proc.stderrTail()}`);
  }

  request(r: { method: string; path: string; headers?: Record<string, string>; body?: Buffer }, agent = this.agent): Promise<Answer> {
    return send(this.port, agent, r.method, r.path, r.headers, r.body);
  }

  /** The repository and registry as text: every kind's ids, then every artefact's state record (artefact and instances). */
  async snapshot(): Promise<string> {
    const parts: string[] = [];
    for (const kind of KINDS) {
      const list = await this.request({ method: 'GET', path: `/${kind}`, headers: { accept: 'application/json' } });
      if (list.status !== 200) throw new Error(`GET /${kind} answered ${list.status}: ${list.text.slice(0, 200)}`);
      const ids = (JSON.parse(list.text) as string[]).slice().sort();
      const states = await Promise.all(
        ids.map((id) => this.request({ method: 'GET', path: `/${kind}/${encodeURIComponent(id)}`, headers: { accept: 'application/json' } })),
      );
      parts.push(`${kind}: ${ids.join(', ')}`);
      states.forEach((s, i) => parts.push(`  ${ids[i]} ${s.status} ${s.text}`));
    }
    return parts.join('\n');
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    this.probeAgent.destroy();
    if (!this.proc.exit) {
      this.proc.child.kill('SIGTERM');
      await Promise.race([this.proc.exited, sleep(15000)]);
    }
    await this.proc.kill();
  }
}

/** The snapshot, or undefined when the server process has died meanwhile (a crash, handled by the caller). */
async function snapshotUnlessGone(server: Server): Promise<string | undefined> {
  try {
    return await server.snapshot();
  } catch (err) {
    await sleep(200); // an exit is reported a moment after the connection drops
    if (server.proc.exit) return undefined;
    throw err;
  }
}

const describeRequest = (r: FuzzRequest): string =>
  `${r.method} ${r.path.slice(0, 120)} ${JSON.stringify(r.headers)} ${r.hostile ? `<${r.hostile}>` : r.body ? JSON.stringify(r.body.toString('utf8').slice(0, 160)) : ''}`;

/** Where two snapshots first differ, with a little context. */
function firstDifference(a: string, b: string): { before: string; after: string } {
  const la = a.split('\n');
  const lb = b.split('\n');
  for (let i = 0; i < Math.max(la.length, lb.length); i++) {
    if (la[i] !== lb[i]) return { before: (la[i] ?? '<none>').slice(0, 300), after: (lb[i] ?? '<none>').slice(0, 300) };
  }
  return { before: '', after: '' };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function restFuzz(count: number, seed: number, log: (line: string) => void): Promise<RestFuzzResult> {
  const started = performance.now();
  const requests = generateRequests(count, seed);
  const tmp = tempDir('fuzz-rest');
  const config = join(tmp.path, 'base.yaml');
  writeFileSync(config, BASE_CONFIG);
  const server = new Server(config);
  const result: RestFuzzResult = {
    seed,
    requests: 0,
    statuses: {},
    serverErrors: 0,
    noAnswer: 0,
    crashes: [],
    stateChecks: 0,
    stateChanges: [],
    successfulChanges: 0,
    latencyMs: { p50: 0, p99: 0, max: 0, over1s: 0 },
    hostile: [],
    examples500: [],
    seconds: 0,
  };
  const latencies: number[] = [];
  const hostile = new Map<string, HostileFigure>();
  try {
    await server.start();
    let state = await server.snapshot();
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i];
      if (server.proc.exit) {
        const exit = server.proc.exit;
        result.crashes.push({ afterRequest: i, exit: String(exit.signal ?? exit.code), stderr: server.proc.stderrTail().slice(-1500) });
        log(`fuzz: the server exited (${exit.signal ?? exit.code}) after request ${i}; restarting`);
        await server.stop();
        await server.start();
        state = await server.snapshot();
      }
      const body = r.hostile ? HOSTILE[r.hostile].make() : r.body;
      let probe: Promise<Answer> | undefined;
      const probeTimer = r.hostile
        ? setTimeout(() => {
            probe = server.request({ method: 'GET', path: '/version' }, server.probeAgent);
          }, 100)
        : undefined;
      const answer = await server.request({ method: r.method, path: r.path, headers: r.headers, body });
      clearTimeout(probeTimer);
      result.requests++;
      latencies.push(answer.ms);
      const status = String(answer.status);
      result.statuses[status] = (result.statuses[status] ?? 0) + 1;
      if (answer.status === 'none') result.noAnswer++;
      else if (answer.status >= 500) {
        result.serverErrors++;
        if (result.examples500.length < 5) result.examples500.push(`${answer.status} for ${describeRequest(r)}: ${answer.text.slice(0, 200)}`);
      }
      if (r.hostile) {
        const probeMs = probe ? (await probe).ms : undefined;
        const h: HostileFigure = hostile.get(r.hostile) ?? { name: r.hostile, count: 0, statuses: {}, maxMs: 0 };
        h.count++;
        h.statuses[status] = (h.statuses[status] ?? 0) + 1;
        h.maxMs = Math.max(h.maxMs, answer.ms);
        if (probeMs !== undefined) h.maxProbeMs = Math.max(h.maxProbeMs ?? 0, probeMs);
        hostile.set(r.hostile, h);
      }
      const failed = answer.status === 'none' || answer.status >= 400;
      const reads = r.method === 'GET' || r.method === 'HEAD';
      if (!reads) {
        const now = await snapshotUnlessGone(server);
        if (now === undefined) continue; // the process died: counted as a crash before the next request
        if (failed) {
          result.stateChecks++;
          if (now !== state) result.stateChanges.push({ request: describeRequest(r), status, ...firstDifference(state, now) });
        } else if (now !== state) result.successfulChanges++;
        state = now;
      }
      if ((i + 1) % 1000 === 0)
        log(`fuzz: ${i + 1}/${requests.length} requests, ${result.serverErrors} 5xx, ${result.stateChanges.length} state changes after failures`);
    }
    // the server must still answer at the end
    const last = await server.request({ method: 'GET', path: '/version' });
    if (last.status !== 200 || server.proc.exit) {
      result.crashes.push({
        afterRequest: requests.length,
        exit: String(server.proc.exit?.signal ?? server.proc.exit?.code ?? `GET /version: ${last.status}`),
        stderr: server.proc.stderrTail().slice(-1500),
      });
    }
  } finally {
    await server.stop();
    tmp.remove();
  }
  latencies.sort((a, b) => a - b);
  result.latencyMs = {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? 0,
    over1s: latencies.filter((l) => l > 1000).length,
  };
  result.hostile = [...hostile.values()].sort((a, b) => a.name.localeCompare(b.name));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

// ---- mutated events into a tcp onramp ----

const EVENTS_CONFIG = `onramp:
  - id: fuzzin
    type: tcp
    codec: json
    preprocessors: [lines]
    metrics_interval_s: 1
    config: { host: 127.0.0.1, port: \${PORT} }
pipeline:
  - id: accepted
    interface: { inputs: [in], outputs: [out] }
    nodes: [{ id: pass, type: passthrough }]
    links: { in: [pass], pass: [out] }
  - id: rejected
    interface: { inputs: [in], outputs: [out] }
    nodes: [{ id: pass, type: passthrough }]
    links: { in: [pass], pass: [out] }
offramp:
  - id: good
    type: blackhole
    metrics_interval_s: 1
    config: { warmup_secs: 0, stop_after_secs: 0, significant_figures: 2 }
  - id: bad
    type: file
    codec: json
    metrics_interval_s: 1
    config: { file: "\${ERR}" }
binding:
  - id: fuzz
    links:
      "/onramp/fuzzin/{instance}/out": ["/pipeline/accepted/{instance}/in"]
      "/onramp/fuzzin/{instance}/err": ["/pipeline/rejected/{instance}/in"]
      "/pipeline/accepted/{instance}/out": ["/offramp/good/{instance}/in"]
      "/pipeline/rejected/{instance}/out": ["/offramp/bad/{instance}/in"]
      "/pipeline/system::metrics/system/out": ["/offramp/system::stdout/system/in"]
mapping:
  /binding/fuzz/main: { instance: main }
`;

/** Writes `data` to a new connection in chunks of the given sizes (cycled), then ends it and waits for the close. */
function sendInChunks(port: number, data: Buffer, sizes: number[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', reject);
    socket.on('close', () => resolve());
    const write = async () => {
      let offset = 0;
      for (let i = 0; offset < data.length; i++) {
        const size = sizes[i % sizes.length];
        if (!socket.write(data.subarray(offset, offset + size))) await new Promise((r) => socket.once('drain', r));
        offset += size;
      }
      socket.end();
    };
    socket.on('connect', () => void write().catch(reject));
  });
}

async function eventFuzz(count: number, seed: number, log: (line: string) => void): Promise<EventFuzzResult> {
  const started = performance.now();
  const samples = await loadLines(join(REPO, 'bench', 'data', 'data.json.xz'));
  const lines = generateLines(count, seed, samples);
  const byKind: EventFuzzResult['byKind'] = {};
  for (const l of lines) {
    const k = (byKind[l.kind] ??= { lines: 0, valid: 0 });
    k.lines++;
    if (l.valid) k.valid++;
  }
  const connections = 4;
  // each connection's share; its last line goes without a newline (the onramp must flush it at the close)
  const shares = Array.from({ length: connections }, (_, c) => {
    const mine = lines.filter((_, i) => i % connections === c).map((l) => l.bytes);
    return Buffer.concat(mine.flatMap((b, i) => (i < mine.length - 1 ? [b, Buffer.from('\n')] : [b])));
  });
  const chunkSizes = fc.sample(fc.integer({ min: 1, max: 4096 }), { seed, numRuns: 256 });
  const tmp = tempDir('fuzz-events');
  const metrics = new MetricsReader();
  const port = await freePort();
  const config = join(tmp.path, 'events.yaml');
  const errFile = join(tmp.path, 'err.json');
  writeFileSync(config, fill(EVENTS_CONFIG, { PORT: port, ERR: errFile }));
  const proc = startEddy(['server', 'run', '-f', config, '--api-port', '0'], metrics.line);
  const result: EventFuzzResult = {
    seed,
    lines: count,
    bytesSent: shares.reduce((a, b) => a + b.length, 0),
    connections,
    expectedOut: lines.filter((l) => l.valid).length,
    byKind,
    seconds: 0,
  };
  try {
    await waitFor(() => proc.stderrTail().includes('Listening at') || proc.exit !== undefined, 60000, 'the eddy child to start');
    await Promise.all(shares.map((share, c) => sendInChunks(port, share, chunkSizes.slice(c * 64, c * 64 + 64))));
    log(`fuzz: sent ${count} lines (${result.bytesSent} bytes) over ${connections} connections`);
    const counted = () => (metrics.get('/offramp/good/main|in') ?? 0) + (metrics.get('/offramp/bad/main|in') ?? 0);
    // every frame reaches one of the two blackholes, or the counts stop moving
    let last = -1;
    let lastChange = Date.now();
    while (counted() < count && Date.now() - lastChange < 10000 && !proc.exit) {
      if (counted() !== last) {
        last = counted();
        lastChange = Date.now();
      }
      await sleep(200);
    }
    await sleep(1500); // one more metrics report, so the byte count is the final one
    if (proc.exit) result.crashed = `${proc.exit.signal ?? proc.exit.code}: ${proc.stderrTail().slice(-1000)}`;
    result.out = metrics.get('/offramp/good/main|in');
    result.err = metrics.get('/offramp/bad/main|in');
    result.bytesRead = metrics.get('/onramp/fuzzin/main|bytes');
    if (!proc.exit) proc.child.kill('SIGTERM');
    await Promise.race([proc.exited, sleep(15000)]);
    Object.assign(result, compareWithOracle(lines, readFileSync(errFile, 'utf8')));
  } finally {
    await proc.kill();
    tmp.remove();
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

/** How the err port shows a frame's bytes: the text when they are UTF-8, else `base64:` and the bytes, the first KiB either way. */
function shownAsRaw(bytes: Buffer): string {
  const head = bytes.subarray(0, 1024);
  const text = head.toString('utf8');
  return Buffer.compare(Buffer.from(text, 'utf8'), head) === 0 ? text : `base64:${head.toString('base64')}`;
}

/** Matches the err events (one JSON line each, with `raw` and `error`) against the lines sent and the oracle. */
function compareWithOracle(lines: FuzzLine[], errText: string): Pick<EventFuzzResult, 'errors' | 'rejectedValid' | 'acceptedInvalid' | 'disagreements'> {
  const rejected = new Map<string, string[]>(); // raw -> error messages, one per err event
  const messages = new Map<string, number>();
  for (const line of errText.split('\n')) {
    if (line === '') continue;
    const e = JSON.parse(line) as { raw: string | null; error: string };
    const list = rejected.get(e.raw ?? '') ?? [];
    list.push(e.error);
    rejected.set(e.raw ?? '', list);
    const message = e.error.replace(/\d+/g, 'N').slice(0, 90);
    messages.set(message, (messages.get(message) ?? 0) + 1);
  }
  let rejectedValid = 0;
  let acceptedInvalid = 0;
  const disagreements: string[] = [];
  const note = (text: string) => {
    if (disagreements.length < 8 && !disagreements.includes(text)) disagreements.push(text);
  };
  for (const l of lines) {
    const raw = shownAsRaw(l.bytes);
    const errors = rejected.get(raw);
    const error = errors?.shift();
    const show = JSON.stringify(l.bytes.toString('utf8').slice(0, 60));
    if (error !== undefined && l.valid) {
      rejectedValid++;
      note(`valid JSON for JSON.parse, on err: ${show} (${error.slice(0, 100)})`);
    } else if (error === undefined && !l.valid) {
      acceptedInvalid++;
      note(`not JSON for JSON.parse, on out: ${show}`);
    }
  }
  const errors = [...messages]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([message, count]) => ({ message, count }));
  return { errors, rejectedValid, acceptedInvalid, disagreements };
}
