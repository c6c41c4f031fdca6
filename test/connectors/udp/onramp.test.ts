import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Worker } from 'node:worker_threads';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { rampMetricEvents } from '../../../src/connectors/_shared/ramp-metrics';
import { PrometheusExporter } from '../../../src/runtime/observe/prometheus';
import { status } from '../../../src/runtime/observe/status';
import type { Subscription } from 'rxjs';
import { createLogger } from '../../../src/core/logger';
import type { Frame, OnrampSource } from '../../../src/connectors/connector';
import { createUdpSource } from '../../../src/connectors/udp/onramp';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { fakeOnrampContext, freePort, netcat, receiver, recordingLogger, sleep, type Receiver } from '../net-helpers';
import { boundAddresses } from '../bound-addresses';

/** A UDP sender bound to an ephemeral loopback port. */
async function sender(): Promise<Socket & { sendTo(port: number, data: Buffer | string): Promise<void> }> {
  const socket = createSocket('udp4') as Socket & { sendTo(port: number, data: Buffer | string): Promise<void> };
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  socket.sendTo = (port, data) =>
    new Promise<void>((resolve, reject) =>
      socket.send(typeof data === 'string' ? Buffer.from(data) : data, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
    );
  return socket;
}

/** GELF chunks of `message`: magic 1e 0f, 8-byte message id, sequence number, sequence count, then the data. */
function gelfChunks(message: Buffer, chunkSize: number): Buffer[] {
  const id = randomBytes(8);
  const count = Math.ceil(message.length / chunkSize);
  return Array.from({ length: count }, (_, seq) =>
    Buffer.concat([Buffer.from([0x1e, 0x0f]), id, Buffer.from([seq, count]), message.subarray(seq * chunkSize, (seq + 1) * chunkSize)]),
  );
}

describe('udp onramp', () => {
  let flow: Receiver | undefined;
  let port: number;
  const senders: Socket[] = [];
  beforeEach(async () => (port = await freePort('udp')));
  afterEach(async () => {
    for (const s of senders.splice(0)) s.close();
    await flow?.stop();
    flow = undefined;
  });

  const start = async (extra: Record<string, unknown> = {}) => (flow = await receiver({ type: 'udp', config: { host: '127.0.0.1', port }, ...extra }));

  it('receives on 127.0.0.1 when its config gives no host', async () => {
    const { collected } = await start({ config: { port } });
    expect(boundAddresses(port, 'udp'), 'addresses bound to the port').to.deep.equal(['127.0.0.1']);
    const a = await sender();
    senders.push(a);
    await a.sendTo(port, 'local datagram');
    await eventually(() => collected.out.length === 1, 5000, 'the local datagram');
    expect(collected.out[0].data).to.equal('local datagram');
  });

  it('makes one event per datagram, decoded as a string by default, with the sender in its origin', async () => {
    const { collected } = await start();
    const a = await sender();
    const b = await sender();
    senders.push(a, b);
    await a.sendTo(port, 'first datagram\nwith a newline inside');
    await b.sendTo(port, 'from b');
    await a.sendTo(port, 'again from a');
    await eventually(() => collected.out.length === 3, 5000, 'three events');
    expect(collected.out.map((e) => e.data)).to.deep.equal(['first datagram\nwith a newline inside', 'from b', 'again from a']);
    expect(collected.out.map((e) => e.originUri)).to.deep.equal([
      `svc-udp://127.0.0.1:${a.address().port}/${port}`,
      `svc-udp://127.0.0.1:${b.address().port}/${port}`,
      `svc-udp://127.0.0.1:${a.address().port}/${port}`,
    ]);
  });

  it('receives a datagram from netcat (nc -u)', async () => {
    const { collected } = await start();
    const dir = mkdtempSync(join(tmpdir(), 'eddy-udp-'));
    try {
      writeFileSync(join(dir, 'in.txt'), 'hello from netcat');
      const fd = openSync(join(dir, 'in.txt'), 'r');
      const nc = netcat(['-u', '-w1', '127.0.0.1', String(port)], fd);
      closeSync(fd);
      await eventually(() => collected.out.length === 1, 5000, 'the datagram');
      expect(collected.out[0].data).to.equal('hello from netcat');
      await nc.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reassembles chunked, gzip-compressed GELF from several senders with decompress, gelf-chunking, decompress', async () => {
    const { collected } = await start({ codec: 'json', preprocessors: ['decompress', 'gelf-chunking', 'decompress'] });
    // random text does not compress, so each message needs many chunks
    const messages = [0, 1].map((i) => ({
      version: '1.1',
      host: `sender-${i}`,
      short_message: `message ${i}`,
      full_message: randomBytes(6000).toString('hex'),
      level: 6,
    }));
    const chunks = messages.map((m) => gelfChunks(gzipSync(Buffer.from(JSON.stringify(m))), 1000));
    expect(chunks[0].length).to.be.greaterThan(5);
    const [s0, s1] = [await sender(), await sender()];
    senders.push(s0, s1);
    // interleaved, and the second message's chunks in reverse order
    const reversed = [...chunks[1]].reverse();
    for (let i = 0; i < Math.max(chunks[0].length, reversed.length); i++) {
      if (i < chunks[0].length) await s0.sendTo(port, chunks[0][i]);
      if (i < reversed.length) await s1.sendTo(port, reversed[i]);
      await sleep(1); // pacing only, so that loopback drops no datagram; the test waits for all four messages
    }
    // an unchunked compressed message and a plain one pass through the same chain
    await s0.sendTo(port, gzipSync(Buffer.from('{"version":"1.1","short_message":"single"}')));
    await s0.sendTo(port, '{"version":"1.1","short_message":"plain"}');
    await eventually(() => collected.out.length === 4, 5000, 'four messages');
    expect(collected.err).to.deep.equal([]);
    expect(collected.out.slice(0, 2).map((e) => e.data)).to.have.deep.members(messages);
    expect(collected.out.slice(2).map((e) => (e.data as { short_message: string }).short_message)).to.deep.equal(['single', 'plain']);
  });

  it('sends a malformed datagram to err and still delivers the next one', async () => {
    const { collected } = await start({ codec: 'json' });
    const s = await sender();
    senders.push(s);
    await s.sendTo(port, '{"n":1}');
    await s.sendTo(port, 'not json');
    await s.sendTo(port, '{"n":2}');
    await eventually(() => collected.out.length === 2 && collected.err.length === 1, 5000, 'two events and one error');
    expect(collected.out.map((e) => e.data)).to.deep.equal([{ n: 1 }, { n: 2 }]);
    expect((collected.err[0].data as { raw: string }).raw).to.equal('not json');
  });

  it('fails the activation, naming the onramp, when its port is in use', async () => {
    const taken = await sender();
    senders.push(taken);
    const runtime = await new Runtime({ logger: createLogger('silent') }).start();
    try {
      runtime.publish('onramp', { id: 'gelf', type: 'udp', config: { host: '127.0.0.1', port: taken.address().port } });
      runtime.publish('binding', { id: 'b', links: { '/onramp/gelf/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } });
      let message = '';
      await runtime.activate('binding', 'b', 'main').catch((err: unknown) => (message = (err as Error).message));
      expect(message).to.include("onramp 'gelf'").and.include('EADDRINUSE');
    } finally {
      await runtime.shutdown();
    }
  });
});

describe('udp onramp source (the type on its own)', () => {
  let source: OnrampSource | undefined;
  let sub: Subscription | undefined;
  const senders: Socket[] = [];
  afterEach(async () => {
    sub?.unsubscribe();
    for (const s of senders.splice(0)) s.close();
    await source?.close?.();
    source = sub = undefined;
  });

  it('holds the datagrams that arrive while paused and delivers them in order, with their arrival time, on resume', async () => {
    const port = await freePort('udp');
    source = await createUdpSource({ host: '127.0.0.1', port }, fakeOnrampContext(), { maxBytes: 1 << 20 });
    const frames: Frame[] = [];
    sub = source.frames.subscribe((f) => frames.push(f));
    const s = await sender();
    senders.push(s);
    await s.sendTo(port, 'd0');
    await eventually(() => frames.length === 1, 5000, 'the first datagram');
    source.pause!();
    for (let i = 1; i <= 50; i++) await s.sendTo(port, `d${i}`);
    // every datagram read and held: one delivered while paused would not be among them
    await eventually(() => source!.inputs!().held === 50, 5000, '50 datagrams held');
    expect(frames).to.have.length(1);
    source.resume!();
    expect(frames.map((f) => f.data!.toString())).to.deep.equal(Array.from({ length: 51 }, (_, i) => `d${i}`));
    expect(frames.slice(1).every((f) => typeof f.ingestNs === 'bigint')).to.equal(true);
    expect(new Set(frames.map((f) => f.stream))).to.deep.equal(new Set([0]));
  });

  it('holds at most its limit while paused, drops and counts newer datagrams beyond it, and says so', async () => {
    const port = await freePort('udp');
    const logger = recordingLogger();
    source = await createUdpSource({ host: '127.0.0.1', port }, fakeOnrampContext(logger), { maxBytes: 1000 });
    const frames: Frame[] = [];
    sub = source.frames.subscribe((f) => frames.push(f));
    source.pause!();
    const s = await sender();
    senders.push(s);
    for (let i = 0; i < 20; i++) await s.sendTo(port, Buffer.alloc(100, 0x30 + (i % 10)));
    // every datagram read: ten held, ten dropped
    await eventually(() => source!.inputs!().dropped === 10, 5000, 'the datagrams past the limit dropped');
    expect(source.inputs!()).to.deep.include({ held: 10, dropped: 10 });
    expect(frames).to.deep.equal([]);
    source.resume!();
    // the first ten fit the limit; the other ten were dropped, oldest kept
    expect(frames.map((f) => f.data![0])).to.deep.equal(Array.from({ length: 10 }, (_, i) => 0x30 + i));
    expect(logger.lines.filter((l) => l.startsWith('warn'))).to.deep.equal([
      'warn udp onramp /onramp/test/main: 1000 bytes held while paused; dropping newer datagrams until it resumes',
      'warn udp onramp /onramp/test/main: 10 datagrams were dropped while paused (hold limit 1000 bytes)',
    ]);
    // reading again: nothing held, nothing dropped
    await s.sendTo(port, 'after');
    await eventually(() => frames.length === 11, 5000, 'the next datagram');
  });
});

/**
 * Sends `count` datagrams to `port` from a worker thread while this thread
 * is blocked (Atomics.wait), so nothing here reads the socket meanwhile:
 * what does not fit into its receive buffer is dropped by the kernel. Loopback
 * delivers (or drops) a datagram within the send, so once the worker says it
 * is done every datagram is in the buffer or counted as dropped.
 */
function floodWhileBlocked(port: number, count: number): void {
  const done = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `
    const { workerData } = require('node:worker_threads');
    const socket = require('node:dgram').createSocket('udp4');
    const { port, count, done } = workerData;
    let sent = 0;
    for (let i = 0; i < count; i++) {
      socket.send('datagram ' + i, port, '127.0.0.1', (err) => {
        if (err) Atomics.store(done, 0, 2);
        if (++sent === count || err) {
          if (Atomics.load(done, 0) === 0) Atomics.store(done, 0, 1);
          Atomics.notify(done, 0);
          socket.close();
        }
      });
    }
    `,
    { eval: true, workerData: { port, count, done } },
  );
  // a bound on a hung worker, not a timing: the flood takes milliseconds
  const woke = Atomics.wait(done, 0, 0, 60_000);
  void worker.terminate();
  if (woke === 'timed-out' || Atomics.load(done, 0) !== 1) throw new Error(`the sender did not finish (${woke}, state ${Atomics.load(done, 0)})`);
}

describe('udp onramp: receive_buffer_size and the kernel drops metric', function () {
  // /proc/net/udp is Linux's
  before(function () {
    if (process.platform !== 'linux') this.skip();
  });
  let flow: Receiver | undefined;
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  it('a flood past a small receive buffer is dropped by the kernel and reported: received + drops == sent, drops > 0, on /metrics and in ramp_kernel_drops', async () => {
    const port = await freePort('udp');
    const logger = recordingLogger();
    flow = await receiver({ type: 'udp', config: { host: '127.0.0.1', port, receive_buffer_size: 4096 } }, { logger });
    const { runtime, collected } = flow;
    const counters = runtime.onramp('/onramp/src/main')!.runtime.counters;
    expect(logger.lines.filter((l) => l.includes('receive buffer'))).to.satisfy(
      (lines: string[]) =>
        // Linux doubles the request (half for its bookkeeping)
        lines.length === 1 && lines[0] === 'info udp onramp /onramp/src/main: receive buffer: asked for 4096 bytes, the kernel granted 8192',
    );
    expect(counters.kernelDrops!(), 'before the flood').to.equal(0);

    const sent = 2000;
    floodWhileBlocked(port, sent);
    const drops = () => counters.kernelDrops!()!;
    await eventually(() => collected.out.length + drops() === sent, 10_000, `received + dropped = ${sent}`);
    expect(drops()).to.be.greaterThan(0);
    expect(collected.out.length).to.be.greaterThan(0);
    expect(collected.out.length + drops()).to.equal(sent);

    const families = parsePrometheusTextFormat(await new PrometheusExporter().scrape(runtime.observe())) as {
      name: string;
      type: string;
      metrics: { value: string; labels: Record<string, string> }[];
    }[];
    const family = families.find((f) => f.name === 'eddy_onramp_kernel_drops_total')!;
    expect(family.type).to.equal('COUNTER');
    expect(family.metrics).to.deep.equal([{ value: String(drops()), labels: { kind: 'onramp', artefact: 'src', instance: 'main' } }]);
    const event = rampMetricEvents('/onramp/src/main', counters, 1n).find((e) => e.measurement === 'ramp_kernel_drops');
    expect(event).to.deep.include({ tags: { ramp: '/onramp/src/main' }, fields: { count: drops() } });
    expect(status(runtime).instances.find((i) => i.url === '/onramp/src/main')?.kernel_drops, 'GET /status').to.equal(drops());
  });

  it('a receive_buffer_size beyond the system maximum is capped by the kernel, and that is logged as a warning', async () => {
    const logger = recordingLogger();
    flow = await receiver({ type: 'udp', config: { host: '127.0.0.1', port: await freePort('udp'), receive_buffer_size: 2147483647 } }, { logger });
    expect(logger.lines.filter((l) => l.includes('receive buffer'))).to.satisfy(
      (lines: string[]) => lines.length === 1 && /^warn .*asked for 2147483647 bytes, the kernel granted \d+: capped by the system's maximum/.test(lines[0]),
    );
  });
});
