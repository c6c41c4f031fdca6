import { expect } from 'chai';
import { mkdtempSync, openSync, closeSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import type { Frame, OnrampSource } from '../../../src/connectors/connector';
import { tcpOnramp } from '../../../src/connectors/tcp/onramp';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { fakeOnrampContext, freePort, netcat, receiver, sleep, type Receiver } from '../net-helpers';
import { boundAddresses } from '../bound-addresses';

/** A client connection to the onramp, resolved once connected. */
function client(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

const ended = (socket: Socket) => new Promise<void>((r) => socket.once('close', () => r()));

describe('tcp onramp', () => {
  let flow: Receiver | undefined;
  let port: number;
  beforeEach(async () => (port = await freePort()));
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  const start = async (extra: Record<string, unknown> = {}) =>
    (flow = await receiver({ type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port }, ...extra }));

  it('listens on 127.0.0.1 when its config gives no host', async () => {
    const { collected } = await start({ config: { port } });
    expect(boundAddresses(port, 'tcp'), 'addresses listening on the port').to.deep.equal(['127.0.0.1']);
    const socket = await client(port);
    socket.end('{"local":true}\n');
    await eventually(() => collected.out.length === 1, 5000, 'the line from a local client');
    expect(collected.out[0].data).to.deep.equal({ local: true });
  });

  it('keeps each connection its own framing: lines cut across the writes of 20 interleaved connections arrive whole, each with its origin', async () => {
    const { collected } = await start();
    const CONNECTIONS = 20;
    const LINES = 50;
    const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => client(port)));
    // every connection's text, cut into pieces of 1..7 bytes: no piece boundary is a line boundary on purpose
    const pieces = sockets.map((_, c) => {
      const text = Array.from({ length: LINES }, (_, n) => JSON.stringify({ conn: c, n }) + '\n').join('');
      const out: string[] = [];
      for (let i = 0, k = 0; i < text.length; k++) {
        const len = 1 + ((c + k) % 7);
        out.push(text.slice(i, i + len));
        i += len;
      }
      return out;
    });
    // round-robin over the connections, letting the server read between rounds (pacing only: the test waits for every line)
    for (let round = 0; pieces.some((p) => round < p.length); round++) {
      for (let c = 0; c < CONNECTIONS; c++) if (round < pieces[c].length) sockets[c].write(pieces[c][round]);
      if (round % 10 === 0) await sleep(1);
    }
    await eventually(() => collected.out.length === CONNECTIONS * LINES, 8000, 'every line');
    expect(collected.err).to.deep.equal([]);
    for (let c = 0; c < CONNECTIONS; c++) {
      const mine = collected.out.filter((e) => (e.data as { conn: number }).conn === c);
      expect(
        mine.map((e) => (e.data as { n: number }).n),
        `connection ${c}`,
      ).to.deep.equal(Array.from({ length: LINES }, (_, n) => n));
      // one origin per connection: the client's address and port, and the server's port
      expect(new Set(mine.map((e) => e.originUri))).to.deep.equal(new Set([`svc-tcp://127.0.0.1:${sockets[c].localPort}/${port}`]));
    }
    await Promise.all(sockets.map((s) => (s.end(), ended(s))));
  });

  it('takes JSON lines from netcat (nc -N), in order, the last line without a newline included', async () => {
    const { collected } = await start();
    const dir = mkdtempSync(join(tmpdir(), 'eddy-tcp-'));
    try {
      const file = join(dir, 'lines.json');
      const lines = Array.from({ length: 500 }, (_, i) => JSON.stringify({ i, text: 'x'.repeat(i % 50) }));
      writeFileSync(file, lines.join('\n'));
      const fd = openSync(file, 'r');
      const nc = netcat(['-N', '127.0.0.1', String(port)], fd);
      closeSync(fd);
      await eventually(() => collected.out.length === lines.length, 5000, 'all 500 lines');
      await nc.stop();
      expect(collected.out.map((e) => JSON.stringify(e.data))).to.deep.equal(lines);
      expect(collected.err).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('flushes the partial line of a peer that disconnects mid-line: a whole value is an event, a cut one goes to err with its bytes', async () => {
    const { collected } = await start();
    const whole = await client(port);
    whole.end('{"a":1}\n{"a":2}'); // the last value is complete but has no newline
    const cut = await client(port);
    const cutPort = cut.localPort;
    cut.end('{"b":1}\n{"b":'); // the peer goes away in the middle of a value
    await eventually(() => collected.out.length === 3 && collected.err.length === 1, 5000, 'three events and one error');
    expect(collected.out.map((e) => e.data)).to.have.deep.members([{ a: 1 }, { a: 2 }, { b: 1 }]);
    const err = collected.err[0].data as { raw: string; error: string; source_id: string };
    expect(err.raw).to.equal('{"b":');
    expect(err.source_id).to.equal('/onramp/src/main');
    expect(collected.err[0].originUri).to.equal(`svc-tcp://127.0.0.1:${cutPort}/${port}`);
  });

  it('flushes the partial line of a connection that is reset rather than closed', async () => {
    const { runtime, collected, onramp } = await start();
    const socket = await client(port);
    const text = '{"r":1}\n{"r":2}';
    socket.write(text);
    // the bytes are read (the first line decoded) before the reset, so the partial one is in the line buffer
    await eventually(() => runtime.onramp(onramp)!.runtime.counters.bytes === text.length, 5000, 'the bytes read');
    socket.resetAndDestroy();
    await eventually(() => collected.out.length === 2, 5000, 'both values');
    expect(collected.out.map((e) => e.data)).to.deep.equal([{ r: 1 }, { r: 2 }]);
  });

  it('sends a malformed line to err and still delivers the good lines after it', async () => {
    const { collected } = await start();
    const socket = await client(port);
    socket.end('{"ok":1}\nnot json\n{"ok":2}\n');
    await eventually(() => collected.out.length === 2 && collected.err.length === 1, 5000, 'two events and one error');
    expect(collected.out.map((e) => e.data)).to.deep.equal([{ ok: 1 }, { ok: 2 }]);
    expect((collected.err[0].data as { raw: string }).raw).to.equal('not json');
  });

  it('decodes with the default codec json and no default framing: one chunk, one value', async () => {
    const { collected } = await start({ preprocessors: [] });
    const socket = await client(port);
    socket.end('{"whole":"chunk"}');
    await eventually(() => collected.out.length === 1, 5000, 'one event');
    expect(collected.out[0].data).to.deep.equal({ whole: 'chunk' });
  });
});

describe('tcp onramp source (the type on its own)', () => {
  let source: OnrampSource | undefined;
  let sub: Subscription | undefined;
  afterEach(async () => {
    sub?.unsubscribe();
    await source?.close?.();
    source = sub = undefined;
  });

  it('reads nothing while paused, from old and newly accepted connections alike, and everything in order after resume', async () => {
    const port = await freePort();
    source = await tcpOnramp.create({ host: '127.0.0.1', port }, fakeOnrampContext());
    const frames: Frame[] = [];
    sub = source.frames.subscribe((f) => frames.push(f));
    const data = () => Buffer.concat(frames.filter((f) => f.data).map((f) => f.data!)).toString();
    const before = await client(port);
    before.write('one\n');
    await eventually(() => data() === 'one\n', 5000, 'the first write');
    source.pause!();
    before.write('two\n');
    const during = await client(port);
    during.write('three\n');
    // both connections accepted: from here a socket that reads would be flowing, and none is
    await eventually(() => source!.inputs!().open === 2, 5000, 'the second connection accepted');
    expect(source.inputs!(), 'sockets reading while paused').to.deep.equal({ open: 2, reading: 0 });
    expect(data()).to.equal('one\n');
    source.resume!();
    await eventually(() => data().length === 'one\ntwo\nthree\n'.length, 5000, 'the held writes');
    // per connection, in order; each connection its own stream key
    const byStream = new Map<string | number, string>();
    for (const f of frames) if (f.data) byStream.set(f.stream, (byStream.get(f.stream) ?? '') + f.data.toString());
    expect([...byStream.values()].sort()).to.deep.equal(['one\ntwo\n', 'three\n']);
    before.destroy();
    during.destroy();
  });

  it('holds a connection accepted before anything subscribed, unread, and reads it on subscribe', async () => {
    const port = await freePort();
    source = await tcpOnramp.create({ host: '127.0.0.1', port }, fakeOnrampContext());
    const early = await client(port);
    early.write('early\n');
    // accepted before the subscription, and not reading
    await eventually(() => source!.inputs!().open === 1, 5000, 'the connection accepted');
    expect(source.inputs!().reading).to.equal(0);
    const frames: Frame[] = [];
    sub = source.frames.subscribe((f) => frames.push(f));
    await eventually(() => frames.some((f) => f.data?.toString() === 'early\n'), 5000, 'the early write');
    expect(frames[0].originUri).to.equal(`svc-tcp://127.0.0.1:${early.localPort}/${port}`);
    early.destroy();
  });

  it('ends a stream once per connection, and close() frees the port and drops every connection', async () => {
    const port = await freePort();
    source = await tcpOnramp.create({ host: '127.0.0.1', port }, fakeOnrampContext());
    const frames: Frame[] = [];
    sub = source.frames.subscribe((f) => frames.push(f));
    const a = await client(port);
    a.end('bye');
    await eventually(() => frames.some((f) => f.end), 5000, 'the end of the stream');
    // the server's socket closed: its 'end' and 'close' have both fired, so a second end would be here
    await eventually(() => source!.inputs!().open === 0, 5000, 'the connection closed');
    expect(frames.filter((f) => f.end)).to.have.length(1);
    const b = await client(port);
    const bClosed = ended(b);
    b.on('error', () => undefined);
    await source.close!();
    source = undefined;
    await bClosed; // the open connection was dropped
    // the port is free again
    const again: Server = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(port, '127.0.0.1', () => resolve());
    });
    await new Promise((r) => again.close(r));
  });
});

describe('tcp onramp over REST', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-tcp-rest-'));
  });
  afterEach(async () => {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function publish(port: number, target: string): Promise<void> {
    const artefacts: [string, unknown][] = [
      ['onramp', { id: 'listener', type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port } }],
      ['offramp', { id: 'writer', type: 'file', config: { file: target } }],
      [
        'binding',
        {
          id: 'ingest',
          links: {
            '/onramp/listener/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
            '/pipeline/system::passthrough/{instance}/out': ['/offramp/writer/{instance}/in'],
          },
        },
      ],
    ];
    for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
  }

  it('published and activated over REST, delivers lines from a connection to a file', async () => {
    const port = await freePort();
    const target = join(dir, 'out.json');
    await publish(port, target);
    expect((await call(rt.base, 'POST', '/binding/ingest/main')).status).to.equal(201);
    const socket = await client(port);
    socket.end('{"n":1}\n{"n":2}\n');
    const lines = () => readFileSync(target, 'utf8').split('\n').filter(Boolean);
    await eventually(() => lines().length === 2, 5000, 'two lines in the file');
    expect(lines()).to.deep.equal(['{"n":1}', '{"n":2}']);
    expect((await call(rt.base, 'DELETE', '/binding/ingest/main')).status).to.equal(200);
    // deactivated: the port is released
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(port, '127.0.0.1', () => resolve());
    });
    await new Promise((r) => again.close(r));
  });

  it('answers 400 naming the onramp when its port is in use, and keeps running', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    try {
      await publish(port, join(dir, 'never.json'));
      const reply = await call(rt.base, 'POST', '/binding/ingest/main');
      expect(reply.status).to.equal(400);
      const message = (reply.body as { error: string }).error;
      expect(message).to.include("onramp 'listener'");
      expect(message).to.include('EADDRINUSE');
      expect(message).to.include(`127.0.0.1:${port}`);
      expect((await call(rt.base, 'GET', '/version')).status).to.equal(200);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});
