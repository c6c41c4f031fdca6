import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
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
    new Promise<void>((resolve, reject) => socket.send(typeof data === 'string' ? Buffer.from(data) : data, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
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
      await runtime.activate('binding', 'b', 'main').catch((err: Error) => (message = err.message));
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
