import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import type { OfframpType } from '../../../src/connectors/connector';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { freePort, passthrough } from '../net-helpers';

/**
 * A tcp onramp behind an offramp whose sends do not finish until the test
 * lets them: the offramp's in-flight limit triggers the breaker, the onramp
 * pauses its sockets, the kernel's buffers fill and the senders stop
 * draining. Nothing piles up inside eddy, and once the sends complete,
 * every event arrives exactly once.
 */
describe('tcp onramp behind a slow offramp', () => {
  let runtime: Runtime | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await runtime?.shutdown();
    runtime = undefined;
  });

  it('keeps its sockets paused while the senders keep writing: the senders block, eddy holds a bounded number of events, and each event arrives once', async () => {
    const CONCURRENCY = 4;
    const CONNECTIONS = 2;
    const PER_CONNECTION = 40_000; // ~ 8 MB per connection: more than the loopback socket buffers hold
    const LINE_PAD = 'p'.repeat(180);

    // the slow sink: each send waits until `open` (then it finishes on the next tick)
    let open = false;
    const waiting: (() => void)[] = [];
    let started = 0;
    let completed = 0;
    let peakBacklog = 0;
    const seen = new Map<string, number>();
    let read = () => 0;
    const slow: OfframpType<{ concurrency: number }> = {
      name: 'slow',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: {
        type: 'object',
        additionalProperties: false,
        properties: { concurrency: { type: 'integer', minimum: 1, description: 'in-flight limit' } },
      },
      create: () => ({
        send: (_payloads, event: EddyEvent) => {
          started++;
          // events the onramp made that the sink has not finished: in flight, plus any buffered on the way
          peakBacklog = Math.max(peakBacklog, read() - completed);
          return new Promise<void>((resolve) => {
            const finish = () => {
              const { c, n } = event.data as { c: number; n: number };
              const key = `${c}:${n}`;
              seen.set(key, (seen.get(key) ?? 0) + 1);
              completed++;
              resolve();
            };
            if (open) setImmediate(finish);
            else waiting.push(finish);
          });
        },
      }),
    };

    const port = await freePort();
    runtime = new Runtime({ logger: createLogger('silent') }).registerOfframp(slow);
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'tcp', preprocessors: ['lines'], config: { host: '127.0.0.1', port } });
    runtime.publish('pipeline', passthrough('p'));
    runtime.publish('offramp', { id: 'dst', type: 'slow', config: { concurrency: CONCURRENCY } });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main');
    const onramp = runtime.onramp('/onramp/src/main')!.runtime;
    read = () => onramp.counters.out;

    // each sender writes everything at once: what the kernel does not take waits in its Node buffer
    const total = CONNECTIONS * PER_CONNECTION;
    let bytes = 0;
    for (let c = 0; c < CONNECTIONS; c++) {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      const text = Array.from({ length: PER_CONNECTION }, (_, n) => `{"c":${c},"n":${n},"pad":"${LINE_PAD}"}\n`).join('');
      bytes += Buffer.byteLength(text);
      // in 64 KiB writes, so that the sender's `writableLength` tells what the kernel has not taken yet
      const data = Buffer.from(text);
      for (let at = 0; at < data.length; at += 65536) socket.write(data.subarray(at, at + 65536));
    }

    // the sink is full and the breaker is triggered by it
    await eventually(() => started >= CONCURRENCY && !onramp.breaker.isOpen, 5000, 'the breaker triggered by the in-flight limit');
    expect(onramp.breaker.holders()).to.deep.equal(['/offramp/dst/main']);
    // every connection accepted and none reading: from here eddy reads nothing more until the sink lets go
    await eventually(() => onramp.inputs()!.open === CONNECTIONS, 5000, 'both connections accepted');
    expect(onramp.inputs(), 'sockets reading while the breaker is triggered').to.deep.equal({ open: CONNECTIONS, reading: 0 });
    const unsent = sockets.reduce((sum, s) => sum + s.writableLength, 0);
    const readBytes = onramp.counters.bytes;
    // the senders are blocked: most of what they wrote is still in their own buffers
    expect(unsent, 'bytes the senders could not hand to the kernel').to.be.greaterThan(bytes / 2);
    // eddy read at most a few reads' worth per connection (64 KiB reads, plus what a stream buffers)
    expect(readBytes, 'bytes eddy read').to.be.at.most(CONNECTIONS * 256 * 1024);
    // and made events of at most those reads: a bounded number is waiting inside eddy
    const lineBytes = bytes / total;
    expect(onramp.counters.out - completed, 'events inside eddy').to.be.at.most(Math.ceil((CONNECTIONS * 256 * 1024) / lineBytes));
    expect(peakBacklog).to.be.at.most(Math.ceil((CONNECTIONS * 256 * 1024) / lineBytes));

    // let the sink go: everything arrives, each event exactly once
    open = true;
    for (const finish of waiting.splice(0)) setImmediate(finish);
    await eventually(() => completed >= total, 15000, 'every event at the sink');
    // shutdown finishes the sends in flight and ends the flow: an extra delivery would be counted by now
    await runtime.shutdown();
    runtime = undefined;
    expect(completed).to.equal(total);
    expect(seen.size).to.equal(total);
    expect(
      [...seen.values()].every((n) => n === 1),
      'each event once',
    ).to.equal(true);
    expect(onramp.counters.error).to.equal(0);
    expect(peakBacklog, 'events inside eddy at any time').to.be.at.most(Math.ceil((CONNECTIONS * 256 * 1024) / lineBytes));
  });
});
