import { expect } from 'chai';
import { Subscription, type SchedulerLike } from 'rxjs';
import { createSocket, type Socket, type SocketType } from 'node:dgram';
import { createLogger } from '../../../src/core/logger';
import type { Sink } from '../../../src/connectors/connector';
import { createUdpSink, udpOfframp } from '../../../src/connectors/udp/offramp';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { probeOnramp, registriesWith, type ProbeLog } from '../../integration/delivery/helpers';
import { bound, fakeOfframpContext, freePort, netcat, passthrough, testEvent, type Netcat } from '../net-helpers';

/** A UDP receiver on an ephemeral loopback port, keeping every datagram. */
async function udpReceiver(): Promise<{ socket: Socket; port: number; datagrams: Buffer[] }> {
  const socket = createSocket('udp4');
  const datagrams: Buffer[] = [];
  socket.on('message', (m) => datagrams.push(m));
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  return { socket, port: socket.address().port, datagrams };
}

describe('udp offramp', () => {
  let runtime: Runtime | undefined;
  let nc: Netcat | undefined;
  let rx: Socket | undefined;
  afterEach(async () => {
    await runtime?.shutdown();
    await nc?.stop();
    rx?.close();
    runtime = nc = rx = undefined;
  });

  async function flow(log: ProbeLog, count: number, nodes: Record<string, unknown>[], offramp: Record<string, unknown>): Promise<void> {
    runtime = new Runtime({ registries: registriesWith([probeOnramp(log)], []), logger: createLogger('silent') });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'probe', config: { count } });
    const ids = nodes.map((n) => n.id as string);
    const links: Record<string, string[]> = { in: [ids[0]] };
    ids.forEach((id, i) => (links[id] = [ids[i + 1] ?? 'out']));
    runtime.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
    runtime.publish('offramp', { id: 'dst', type: 'udp', ...offramp });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main');
  }

  it('sends one datagram per event and one per batch member, from the configured local port, and acks every event', async () => {
    const receiver = await udpReceiver();
    rx = receiver.socket;
    const local = await freePort('udp');
    const from: number[] = [];
    receiver.socket.on('message', (_m, r) => from.push(r.port));
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    await flow(log, 30, [{ id: 'batch', type: 'generic::batch', config: { count: 4, timeout: 50 } }], {
      config: { host: '127.0.0.1', port: local, dst_host: '127.0.0.1', dst_port: receiver.port },
    });
    await eventually(() => receiver.datagrams.length === 30, 5000, '30 datagrams');
    expect(receiver.datagrams.map((d) => d.toString())).to.deep.equal(Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: i + 1 })));
    expect(new Set(from)).to.deep.equal(new Set([local]));
    await eventually(() => log.acks.length === 30, 5000, '30 acks');
    expect([...log.acks].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(log.fails).to.deep.equal([]);
  });

  it('sends to netcat (nc -u -l), one line per event with postprocessor lines', async () => {
    const port = await freePort('udp');
    nc = netcat(['-d', '-u', '-l', '127.0.0.1', String(port)]);
    await bound(port, 'udp'); // a datagram sent before netcat binds would simply be lost
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    await flow(log, 20, [{ id: 'pass', type: 'passthrough' }], {
      postprocessors: ['lines'],
      config: { dst_host: '127.0.0.1', dst_port: port },
    });
    await eventually(() => nc!.lines().length === 20, 5000, '20 lines at netcat');
    expect(nc.lines()).to.deep.equal(Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i + 1 })));
  });

  it('fails the activation when its local address is in use', async () => {
    const receiver = await udpReceiver();
    rx = receiver.socket;
    const log: ProbeLog = { read: 0, acks: [], fails: [] };
    const error = await flow(log, 1, [passthrough('x').nodes[0]], {
      config: { host: '127.0.0.1', port: receiver.port, dst_host: '127.0.0.1', dst_port: receiver.port },
    }).then(
      () => '',
      (err: unknown) => (err as Error).message,
    );
    expect(error).to.include("offramp 'dst'").and.include('EADDRINUSE');
  });
});

describe('udp offramp sink (the type on its own)', () => {
  let sink: Sink | undefined;
  let rx: Socket | undefined;
  afterEach(async () => {
    await sink?.close?.();
    rx?.close();
    sink = rx = undefined;
  });

  it('fails an event whose datagram the kernel refuses (too large), without triggering, and sends the next one', async () => {
    const receiver = await udpReceiver();
    rx = receiver.socket;
    const { ctx, log } = fakeOfframpContext();
    sink = await udpOfframp.create({ host: '127.0.0.1', port: 0, dst_host: '127.0.0.1', dst_port: receiver.port }, ctx);
    let error = '';
    await Promise.resolve(sink.send([Buffer.alloc(70_000)], testEvent(1))).catch((err: unknown) => (error = (err as Error).message));
    expect(error).to.match(/EMSGSIZE/);
    expect(log.triggers).to.equal(0);
    await sink.send([Buffer.from('fits')], testEvent(2));
    await eventually(() => receiver.datagrams.length === 1, 5000, 'the datagram that fits');
    expect(receiver.datagrams[0].toString()).to.equal('fits');
    expect(log.acks.map((a) => a.event.id.seq)).to.deep.equal([2]);
    expect(typeof log.acks[0].meta?.time).to.equal('number');
  });

  it('triggers when its socket is lost, fails sends meanwhile, rebinds the same local port and restores', async () => {
    const receiver = await udpReceiver();
    rx = receiver.socket;
    const local = await freePort('udp');
    const made: Socket[] = [];
    const factory = (type: SocketType) => {
      const socket = createSocket(type);
      made.push(socket);
      return socket;
    };
    // the rebind runs when the test says: its back-off is jittered (core/jitter.ts), as short as 1 ms, and the down state must be seen first
    const rebinds: (() => void)[] = [];
    const manual: SchedulerLike = {
      now: () => Date.now(),
      schedule: (work: (this: unknown, state?: unknown) => void, _delay?: number, state?: unknown) => {
        rebinds.push(() => work.call(undefined, state));
        return new Subscription();
      },
    };
    const { ctx: plain, log } = fakeOfframpContext();
    const ctx = { ...plain, scheduler: manual };
    sink = await createUdpSink({ host: '127.0.0.1', port: local, dst_host: '127.0.0.1', dst_port: receiver.port }, ctx, factory);
    await sink.send([Buffer.from('one')], testEvent(1));
    made[0].close(); // the socket goes away under the sink
    await eventually(() => log.down && rebinds.length === 1, 5000, 'the breaker triggered, a rebind scheduled');
    expect(() => sink!.send([Buffer.from('lost')], testEvent(2))).to.throw(/no socket bound to 127\.0\.0\.1:/);
    rebinds.shift()!();
    await eventually(() => log.restores === 1, 5000, 'rebound and restored');
    expect(made).to.have.length.at.least(2);
    await sink.send([Buffer.from('two')], testEvent(3));
    await eventually(() => receiver.datagrams.length === 2, 5000, 'both datagrams');
    expect(receiver.datagrams.map((d) => d.toString())).to.deep.equal(['one', 'two']);
    expect(log.acks.map((a) => a.event.id.seq)).to.deep.equal([1, 3]);
  });
});
