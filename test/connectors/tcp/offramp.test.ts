import { expect } from 'chai';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createLogger } from '../../../src/core/logger';
import type { Sink } from '../../../src/connectors/connector';
import { tcpOfframp } from '../../../src/connectors/tcp/offramp';
import { Runtime } from '../../../src/runtime/runtime';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { probeOnramp, registriesWith, type ProbeLog } from '../../integration/delivery/helpers';
import { fakeOfframpContext, freePort, netcat, passthrough, testEvent, type Netcat } from '../net-helpers';

/** netcat listening on a loopback port, printing what it receives; `-k` keeps it accepting after a connection ends. */
const ncListen = (port: number): Netcat => netcat(['-d', '-k', '-l', '127.0.0.1', String(port)]);

const flowLinks = {
  '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
  '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'],
};

describe('tcp offramp', () => {
  let runtime: Runtime | undefined;
  let nc: Netcat | undefined;
  const clients: Socket[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.destroy();
    await runtime?.shutdown();
    await nc?.stop();
    runtime = nc = undefined;
  });

  it('writes every event to netcat (nc -l) as a line and acks each one once its write is done', async () => {
    const port = await freePort();
    nc = ncListen(port);
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    runtime = new Runtime({ registries: registriesWith([probeOnramp(log)], []), logger: createLogger('silent') });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'probe', config: { count: 200 } });
    runtime.publish('pipeline', passthrough('p'));
    runtime.publish('offramp', { id: 'dst', type: 'tcp', postprocessors: ['lines'], config: { host: '127.0.0.1', port } });
    runtime.publish('binding', { id: 'flow', links: flowLinks });
    await runtime.activate('binding', 'flow', 'main');
    await eventually(() => nc!.lines().length === 200, 8000, '200 lines at netcat');
    expect(nc.lines()).to.deep.equal(Array.from({ length: 200 }, (_, i) => JSON.stringify({ id: i + 1 })));
    await eventually(() => log.acks.length === 200, 5000, '200 acks');
    expect(log.acks).to.deep.equal(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(log.fails).to.deep.equal([]);
  });

  it('survives a peer restart: the breaker is triggered while the peer is down, restored when it is back, and later events arrive', async () => {
    const inPort = await freePort();
    const outPort = await freePort();
    runtime = new Runtime({ logger: createLogger('silent') });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port: inPort } });
    runtime.publish('pipeline', passthrough('p'));
    runtime.publish('offramp', { id: 'dst', type: 'tcp', postprocessors: ['lines'], config: { host: '127.0.0.1', port: outPort } });
    runtime.publish('binding', { id: 'flow', links: flowLinks });
    nc = ncListen(outPort);
    await runtime.activate('binding', 'flow', 'main');
    const breaker = runtime.onramp('/onramp/src/main')!.runtime.breaker;
    await eventually(() => breaker.isOpen, 5000, 'connected');

    const sender = connect(inPort, '127.0.0.1');
    clients.push(sender);
    const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => JSON.stringify({ n: from + i }));
    sender.write(lines(1, 10).join('\n') + '\n');
    await eventually(() => nc!.lines().length === 10, 5000, 'the first ten at the first peer');
    expect(nc.lines()).to.deep.equal(lines(1, 10));

    // the peer goes away
    await nc.stop();
    await eventually(() => !breaker.isOpen, 5000, 'the breaker triggered');
    expect(breaker.holders()).to.deep.equal(['/offramp/dst/main']);
    // written while the peer is down: the onramp does not read them yet
    sender.write(lines(11, 20).join('\n') + '\n');

    // the peer is back on the same port
    nc = ncListen(outPort);
    await eventually(() => breaker.isOpen, 10000, 'the breaker restored');
    expect(breaker.holders()).to.deep.equal([]);
    sender.write(lines(21, 30).join('\n') + '\n');
    await eventually(() => nc!.lines().length === 20, 5000, 'twenty lines at the second peer');
    expect(nc.lines()).to.deep.equal(lines(11, 30));
  });
});

describe('tcp offramp over REST', () => {
  let rt: Started;
  let nc: Netcat | undefined;
  beforeEach(async () => (rt = await startRuntime()));
  afterEach(async () => {
    await rt.stop();
    await nc?.stop();
    nc = undefined;
  });

  it('activates with nobody listening: the breaker holds the source until the peer appears, then events flow', async () => {
    const inPort = await freePort();
    const outPort = await freePort();
    const artefacts: [string, unknown][] = [
      ['onramp', { id: 'src', type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port: inPort } }],
      ['pipeline', passthrough('p')],
      // the original's ttl and is_non_blocking, at their defaults, are accepted and change nothing
      ['offramp', { id: 'dst', type: 'tcp', postprocessors: ['lines'], config: { host: '127.0.0.1', port: outPort, ttl: 64, is_non_blocking: false } }],
      ['binding', { id: 'flow', links: flowLinks }],
    ];
    for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    expect((await call(rt.base, 'POST', '/binding/flow/main')).status).to.equal(201);
    const breaker = rt.runtime.onramp('/onramp/src/main')!.runtime.breaker;
    expect(breaker.isOpen).to.equal(false);
    expect(breaker.holders()).to.deep.equal(['/offramp/dst/main']);
    const sender = connect(inPort, '127.0.0.1');
    sender.write('{"early":true}\n');
    nc = ncListen(outPort);
    await eventually(() => breaker.isOpen, 10000, 'connected');
    await eventually(() => nc!.lines().length === 1, 5000, 'the early event');
    expect(nc.lines()).to.deep.equal(['{"early":true}']);
    sender.destroy();
  });

  it("accepts the original's ttl and is_non_blocking: ttl only at the system default 64 (400 saying why otherwise), is_non_blocking either way", async () => {
    const publish = (id: string, extra: Record<string, unknown>) =>
      call(rt.base, 'POST', '/offramp', { body: { id, type: 'tcp', config: { host: '127.0.0.1', port: 1, ...extra } } });
    for (const [id, extra] of [
      ['spec', { ttl: 64, is_non_blocking: false }],
      ['nonblocking', { is_non_blocking: true }],
      ['ttldefault', { ttl: 64 }],
    ] as const) {
      const reply = await publish(id, extra);
      expect(reply.status, id).to.equal(201);
      expect((reply.body as { config: unknown }).config, id).to.deep.equal({ host: '127.0.0.1', port: 1, ...extra });
    }
    const ttl = await publish('ttlsmall', { ttl: 32 });
    expect(ttl.status).to.equal(400);
    expect((ttl.body as { error: string }).error).to.match(
      /config\.ttl: 32 cannot be applied: Node cannot set the IP time-to-live of a TCP socket, so its packets carry the system default \(64\); remove ttl or set it to 64/,
    );
    expect((await publish('ttlzero', { ttl: 0 })).status).to.equal(400);
    const blocking = await publish('blocking', { is_non_blocking: 'yes' });
    expect(blocking.status).to.equal(400);
    expect((blocking.body as { error: string }).error).to.match(/config\.is_non_blocking: must be boolean/);
    expect((await call(rt.base, 'GET', '/offramp')).body)
      .to.include.members(['spec', 'nonblocking', 'ttldefault'])
      .and.not.include.members(['ttlsmall', 'ttlzero', 'blocking']);
  });
});

describe('tcp offramp sink (the type on its own)', () => {
  let sink: Sink | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    await sink?.close?.();
    if (server) await new Promise((r) => server!.close(r));
    sink = server = undefined;
  });

  it('starts triggered, and a send while down fails at once (never buffered, never dropped silently)', async () => {
    const port = await freePort();
    const { ctx, log } = fakeOfframpContext();
    sink = await tcpOfframp.create({ host: '127.0.0.1', port, is_no_delay: true, ttl: 64, is_non_blocking: false }, ctx);
    expect(log.down).to.equal(true);
    expect(() => sink!.send([Buffer.from('x')], testEvent(1))).to.throw(/not connected to 127\.0\.0\.1:/);
    expect(log.acks).to.deep.equal([]);
  });

  it('triggers while the kernel buffer is full and restores on drain; every send resolves after its write and acks with the time it took', async () => {
    const peers: Socket[] = [];
    server = createServer({ pauseOnConnect: true }, (s) => peers.push(s)); // a peer that does not read yet
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const { ctx, log } = fakeOfframpContext();
    sink = await tcpOfframp.create({ host: '127.0.0.1', port, is_no_delay: true, ttl: 64, is_non_blocking: false }, ctx);
    await eventually(() => !log.down && peers.length === 1, 5000, 'connected');
    expect(log).to.include({ triggers: 1, restores: 1 });

    const payload = Buffer.alloc(256 * 1024, 0x61);
    const sends: Promise<void>[] = [];
    for (let i = 1; i <= 400 && !log.down; i++) sends.push(sink.send([payload], testEvent(i)) as Promise<void>);
    expect(log.down, 'triggered by a full buffer').to.equal(true);
    expect(sends.length).to.be.below(400);

    // the peer starts reading: the buffer drains, the breaker is restored, every send completes
    let received = 0;
    peers[0].on('data', (d: Buffer) => (received += d.length));
    peers[0].resume();
    await Promise.all(sends);
    await eventually(() => !log.down, 5000, 'restored on drain');
    expect(log).to.include({ triggers: 2, restores: 2 });
    expect(log.acks.map((a) => a.event.id.seq)).to.deep.equal(sends.map((_, i) => i + 1));
    expect(log.acks.every((a) => typeof a.meta?.time === 'number' && a.meta.time >= 0)).to.equal(true);
    await eventually(() => received === sends.length * payload.length, 5000, 'every byte at the peer');
  });

  it('writes the members of a batch in order, and close() ends the connection after the pending writes', async () => {
    let text = '';
    let peerClosed = false;
    server = createServer((s) => {
      s.setEncoding('utf8').on('data', (d: string) => (text += d));
      s.on('end', () => (peerClosed = true));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const { ctx, log } = fakeOfframpContext();
    sink = await tcpOfframp.create({ host: '127.0.0.1', port, is_no_delay: false, ttl: 64, is_non_blocking: false }, ctx);
    await eventually(() => !log.down, 5000, 'connected');
    await sink.send(
      ['a\n', 'b\n', 'c\n'].map((s) => Buffer.from(s)),
      testEvent(1),
    );
    const last = sink.send([Buffer.from('d\n')], testEvent(2));
    await sink.close!();
    sink = undefined;
    await last;
    await eventually(() => peerClosed, 5000, 'the peer sees the end');
    expect(text).to.equal('a\nb\nc\nd\n');
    expect(log.acks.map((a) => a.event.id.seq)).to.deep.equal([1, 2]);
  });
});
