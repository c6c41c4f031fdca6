import { expect } from 'chai';
import { Agent, request, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { EddyEvent } from '../../../src/core/event';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { freePort, recordingLogger, targetServer, type Received, type TargetServer } from './helpers';

/**
 * A linked rest onramp relaying to a linked rest offramp: the caller's
 * request goes to a real backend, whose answer comes back as the reply.
 * The backends here hold their requests until the test lets them answer,
 * so what the callers get is decided by eddy's clock, not by the backend.
 */

interface Relay {
  runtime: Runtime;
  base: string;
  port: number;
  /** what the linked offramp emitted on err */
  errors: EddyEvent[];
  logger: ReturnType<typeof recordingLogger>;
  stop(): Promise<void>;
}

interface RelaySpec {
  backend: TargetServer;
  timeout: number;
  concurrency: number;
  /** the onramp's preprocessors (lines: one body, several events) */
  preprocessors?: string[];
}

/** web (linked rest onramp) -> to -> hook (linked rest offramp) -> backend; hook's out -> back -> web's in; hook's err recorded. */
async function startRelay(spec: RelaySpec): Promise<Relay> {
  const logger = recordingLogger();
  const runtime = new Runtime({ logger });
  await runtime.start();
  const port = await freePort();
  const pass = (id: string) => ({
    id,
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'pass', type: 'passthrough' }],
    links: { in: ['pass'], pass: ['out'] },
  });
  runtime.publish('onramp', {
    id: 'web',
    type: 'rest',
    linked: true,
    preprocessors: spec.preprocessors ?? [],
    config: { host: '127.0.0.1', port, timeout: spec.timeout },
  });
  runtime.publish('offramp', {
    id: 'hook',
    type: 'rest',
    linked: true,
    config: { endpoint: `http://127.0.0.1:${spec.backend.port}/`, concurrency: spec.concurrency },
  });
  for (const id of ['to', 'back', 'errors']) runtime.publish('pipeline', pass(id));
  runtime.publish('binding', {
    id: 'relay',
    links: {
      '/onramp/web/{instance}/out': ['/pipeline/to/{instance}/in'],
      '/pipeline/to/{instance}/out': ['/offramp/hook/{instance}/in'],
      '/offramp/hook/{instance}/out': ['/pipeline/back/{instance}/in'],
      '/pipeline/back/{instance}/out': ['/onramp/web/{instance}/in'],
      '/offramp/hook/{instance}/err': ['/pipeline/errors/{instance}/in'],
    },
  });
  await runtime.activate('binding', 'relay', 'main', {});
  const errors: EddyEvent[] = [];
  runtime
    .pipeline('/pipeline/errors/main')!
    .output('out')
    .subscribe((e) => errors.push(e));
  return { runtime, base: `http://127.0.0.1:${port}`, port, errors, logger, stop: () => runtime.shutdown() };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A backend that holds every request until `release()`, then answers each with its own body. */
async function holdingBackend(journal: string[]): Promise<TargetServer & { held: ServerResponse[]; release(): void }> {
  const held: ServerResponse[] = [];
  let released = false;
  const answer = (body: string, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  };
  const bodies = new Map<ServerResponse, string>();
  const server = await targetServer((req: Received, res) => {
    journal.push(`arrived ${req.body === '' ? req.method : JSON.parse(req.body).i}`);
    if (released) return answer(req.body, res);
    bodies.set(res, req.body);
    held.push(res);
  });
  return Object.assign(server, {
    held,
    release: () => {
      released = true;
      for (const res of held.splice(0)) answer(bodies.get(res)!, res);
    },
  });
}

/** POSTs `body` on a connection of its own; `journal` gets "answered <i>" when the answer has come. */
function post(base: string, i: number, body: string, journal: string[], agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/relay/${i}`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        journal.push(`answered ${i}`);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads `n` HTTP/1.1 responses (with Content-Length) from a raw socket. */
function responses(socket: Socket, n: number): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const answers: Answer[] = [];
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const split = buffer.indexOf('\r\n\r\n');
        if (split === -1) return;
        const [statusLine, ...lines] = buffer.subarray(0, split).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
        const length = Number(headers['content-length'] ?? 0);
        if (buffer.length < split + 4 + length) return;
        answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: buffer.subarray(split + 4, split + 4 + length).toString('utf8') });
        buffer = buffer.subarray(split + 4 + length);
        if (answers.length === n) return resolve(answers);
      }
    });
  });
}

/** Every request the backend got arrived while its caller was still waiting (the journal is in the order things happened). */
function arrivedBeforeAnswered(journal: string[]): void {
  journal.forEach((entry, at) => {
    const [what, i] = entry.split(' ');
    if (what !== 'arrived') return;
    const answered = journal.indexOf(`answered ${i}`);
    expect(answered === -1 || answered > at, `request ${i} reached the backend after its caller was answered: ${journal.join(', ')}`).to.equal(true);
  });
}

describe('rest relay: linked rest onramp -> linked rest offramp -> a real backend', () => {
  let relay: Relay | undefined;
  let backend: TargetServer | undefined;
  let agent: Agent | undefined;
  beforeEach(() => (agent = new Agent({ keepAlive: false, maxSockets: Infinity })));
  afterEach(async () => {
    agent?.destroy();
    await relay?.stop();
    await backend?.close();
    relay = backend = agent = undefined;
  });

  it('each caller gets its own answer when the backend answers in the reverse order', async () => {
    const journal: string[] = [];
    const waiting: { i: number; res: ServerResponse; body: string }[] = [];
    backend = await targetServer((req, res) => {
      const { i } = JSON.parse(req.body) as { i: number };
      journal.push(`arrived ${i}`);
      waiting.push({ i, res, body: req.body });
      // all three wait at once, then the last to arrive is answered first
      if (waiting.length < 3) return;
      for (const w of waiting.reverse()) {
        w.res.writeHead(200, { 'content-type': 'application/json', 'x-for': String(w.i) });
        w.res.end(w.body);
      }
    });
    relay = await startRelay({ backend, timeout: 10000, concurrency: 3 });
    const answers = await Promise.all([1, 2, 3].map((i) => post(relay!.base, i, JSON.stringify({ i }), journal, agent!)));
    expect(answers.map((a) => [a.status, a.headers['x-for'], JSON.parse(a.body)])).to.deep.equal([
      [200, '1', { i: 1 }],
      [200, '2', { i: 2 }],
      [200, '3', { i: 3 }],
    ]);
    expect(journal.filter((e) => e.startsWith('answered')).length).to.equal(3);
  });

  it('a backend that does not answer in time: the caller gets 504 while the backend still holds the request, and the late answer is dropped', async () => {
    const journal: string[] = [];
    const holding = (backend = await holdingBackend(journal));
    relay = await startRelay({ backend, timeout: 1000, concurrency: 2 });
    const answer = await post(relay.base, 1, '{"i":1}', journal, agent!);
    expect(answer.status).to.equal(504);
    expect(JSON.parse(answer.body)).to.deep.equal({ error: 'no reply within 1000 ms' });
    expect(holding.held, 'held by the backend when the caller was answered').to.have.length(1);
    arrivedBeforeAnswered(journal);
    holding.release();
    await eventually(() => relay!.logger.lines.some((l) => l.includes('dropped a late reply: its request no longer waits')), 5000, 'the late answer dropped');
  });

  it('under backpressure every caller is answered by its deadline (504, or 503 with Retry-After), and the backend gets no request whose caller was already answered', async function () {
    this.timeout(30000);
    const journal: string[] = [];
    const holding = (backend = await holdingBackend(journal));
    relay = await startRelay({ backend, timeout: 500, concurrency: 2 });
    const count = 30;
    const answers = await Promise.all(Array.from({ length: count }, (_, i) => post(relay!.base, i, JSON.stringify({ i }), journal, agent!)));
    // every caller was answered while the backend still held what it got: the answers did not wait for it
    expect(holding.held.length, 'requests the backend holds').to.be.within(1, 2);
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s !== 503 && s !== 504),
      `statuses ${statuses.join(', ')}`,
    ).to.deep.equal([]);
    for (const a of answers.filter((a) => a.status === 503)) {
      expect(a.headers['retry-after']).to.equal('1');
      expect(JSON.parse(a.body).error).to.match(/not taken within 500 ms: the onramp is held back by backpressure/);
    }
    for (const a of answers.filter((a) => a.status === 504)) expect(JSON.parse(a.body).error).to.equal('no reply within 500 ms');
    const entered = statuses.filter((s) => s === 504).length;
    expect(entered, 'requests whose event entered the flow').to.be.at.least(holding.held.length);

    // the backend answers at last: every event that entered the flow was either sent (and its answer is late)
    // or, its deadline passed, failed at the offramp without being sent
    holding.release();
    await eventually(() => backend!.received.length + relay!.errors.length === entered, 10000, 'every event sent or failed');
    for (const e of relay.errors) expect((e.data as { error: string }).error).to.match(/not sent: its \$deadline had passed/);
    arrivedBeforeAnswered(journal);
  });

  it('a request read whole just after the gate closed waits in the onramp; answered 503 at its deadline, it never enters the flow', async () => {
    const journal: string[] = [];
    const holding = (backend = await holdingBackend(journal));
    relay = await startRelay({ backend, timeout: 1000, concurrency: 1 });
    // two GETs pipelined in one write: Node parses both and ends both a tick later, one after the other;
    // the first one's event fills the offramp (concurrency 1) and closes the gate before the second ends
    const socket = connect(relay.port, '127.0.0.1');
    socket.write('GET /p/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /p/2 HTTP/1.1\r\nHost: x\r\n\r\n');
    const answers = await responses(socket, 2);
    socket.destroy();
    expect(answers.map((a) => a.status)).to.deep.equal([504, 503]);
    expect(answers[1].headers['retry-after']).to.equal('1');
    expect(holding.held).to.have.length(1);
    const onramp = relay.runtime.onramp('/onramp/web/main')!.runtime;
    expect(onramp.counters.out, 'events made').to.equal(1);
    // the backend answers and the gate opens: the answered request is not handed on, the next one is served
    holding.release();
    await eventually(() => onramp.breaker.isOpen, 5000, 'the gate open again');
    const third = await post(relay.base, 3, '{"i":3}', journal, agent!);
    expect(third.status).to.equal(200);
    expect(backend.received.map((r) => r.method)).to.deep.equal(['GET', 'POST']);
    expect(onramp.counters.out, 'events made').to.equal(2);
  });

  it('one body of several events: those still waiting for a turn when the deadline passes are not sent, and fail', async () => {
    const journal: string[] = [];
    const holding = (backend = await holdingBackend(journal));
    relay = await startRelay({ backend, timeout: 1000, concurrency: 1, preprocessors: ['lines'] });
    const answer = await post(relay.base, 1, '{"i":1}\n{"i":2}\n{"i":3}\n', journal, agent!);
    expect(answer.status).to.equal(504);
    // the first was sent, and the backend holds it; the other two wait for its turn
    expect(backend.received.map((r) => JSON.parse(r.body).i)).to.deep.equal([1]);
    holding.release();
    await eventually(() => relay!.errors.length === 2, 5000, 'two err events');
    for (const e of relay.errors) expect((e.data as { error: string }).error).to.match(/not sent: its \$deadline had passed by \d+ ms when it got its turn/);
    expect(backend.received.map((r) => JSON.parse(r.body).i)).to.deep.equal([1]);
    expect(relay.runtime.offramp('/offramp/hook/main')!.counters.error).to.equal(2);
    arrivedBeforeAnswered(journal);
  });
});
