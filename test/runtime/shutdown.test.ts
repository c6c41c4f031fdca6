import { expect } from 'chai';
import { Subject } from 'rxjs';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame } from '../../src/connectors/connector';
import type { EddyEvent } from '../../src/core/event';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { eventually } from '../helpers/runtime';

describe('runtime shutdown', () => {
  it('drains what operators hold: a partial batch reaches the sink before it closes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eddy-shutdown-'));
    const source = join(dir, 'in.json');
    writeFileSync(source, [1, 2, 3, 4, 5, 6, 7].map((n) => JSON.stringify({ n })).join('\n'));
    const received: EddyEvent[] = [];
    let closed = false;
    const runtime = new Runtime({ logger: createLogger('silent') }).registerOfframp({
      name: 'collect',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: () => ({
        send: (_payloads, event) => void received.push(event),
        close: () => void (closed = true),
      }),
    });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'file', config: { source } });
    runtime.publish('pipeline', {
      id: 'batched',
      interface: {},
      nodes: [{ id: 'batch', type: 'generic::batch', config: { count: 100 } }],
      links: { in: ['batch'], batch: ['out'] },
    });
    runtime.publish('pipeline', { id: 'after', interface: {}, nodes: [], links: { in: ['out'] } });
    runtime.publish('offramp', { id: 'dst', type: 'collect' });
    runtime.publish('binding', {
      id: 'flow',
      links: {
        '/onramp/src/{instance}/out': ['/pipeline/batched/{instance}/in'],
        '/pipeline/batched/{instance}/out': ['/pipeline/after/{instance}/in'],
        '/pipeline/after/{instance}/out': ['/offramp/dst/{instance}/in'],
      },
    });
    await runtime.activate('binding', 'flow', 'main');
    const onramp = runtime.onramp('/onramp/src/main')!;
    await eventually(() => onramp.runtime.counters.out === 7, 3000, 'all lines read');
    expect(received).to.have.length(0);
    await runtime.shutdown();
    expect(received).to.have.length(1);
    expect(received[0].isBatch).to.equal(true);
    expect((received[0].data as { data: { value: { n: number } } }[]).map((e) => e.data.value.n)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    expect(closed).to.equal(true);
  });

  /**
   * The shutdown order (src/runtime/shutdown.ts), seen from the types: the
   * probe source records its pause, acks and close; the recorder sink holds
   * its send open until another offramp (bell, activated by itself, sent
   * nothing) is closed, so that ack comes while the offramps close: it must
   * still reach the source, which is disconnected and closed only after them.
   */
  it('keeps its order: sources paused, pipelines drained, sinks closed with the acks of their last sends reaching the sources, sources closed last', async () => {
    const steps: string[] = [];
    const frames = new Subject<Frame>();
    let ring!: () => void;
    const bell = new Promise<void>((resolve) => (ring = resolve));
    const emptyConfig = { type: 'object', additionalProperties: false, properties: {} };
    const runtime = new Runtime({ logger: createLogger('silent') })
      .registerOnramp({
        name: 'probe',
        defaultCodec: 'json',
        configSchema: emptyConfig,
        create: () => ({
          frames,
          transactional: true,
          pause: () => void steps.push('source paused'),
          resume: () => void steps.push('source resumed'),
          onAck: () => void steps.push('source acked'),
          onFail: () => void steps.push('source failed'),
          close: () => void steps.push('source closed'),
        }),
      })
      .registerOfframp({
        name: 'recorder',
        defaultCodec: 'json',
        autoAck: true,
        configSchema: emptyConfig,
        create: () => ({
          send: (_payloads, event) => {
            steps.push(`sink got ${event.isBatch ? 'a batch' : 'an event'}`);
            return bell;
          },
          close: () => void steps.push('sink closed'),
        }),
      })
      .registerOfframp({
        name: 'bell',
        defaultCodec: 'json',
        autoAck: true,
        configSchema: emptyConfig,
        create: () => ({
          send: () => undefined,
          close: () => {
            steps.push('bell closed');
            ring();
          },
        }),
      });
    await runtime.start();
    runtime.publish('onramp', { id: 'src', type: 'probe' });
    runtime.publish('pipeline', {
      id: 'batched',
      interface: {},
      nodes: [{ id: 'batch', type: 'generic::batch', config: { count: 100 } }],
      links: { in: ['batch'], batch: ['out'] },
    });
    runtime.publish('offramp', { id: 'dst', type: 'recorder' });
    runtime.publish('offramp', { id: 'bell', type: 'bell' });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/src/{instance}/out': ['/pipeline/batched/{instance}/in'], '/pipeline/batched/{instance}/out': ['/offramp/dst/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main');
    await runtime.activate('offramp', 'bell', 'main');
    for (const n of [1, 2, 3]) frames.next({ stream: 0, originUri: 'svc-probe://test', value: { n } });
    expect(runtime.onramp('/onramp/src/main')!.runtime.counters.out).to.equal(3);
    expect(steps, 'the batch holds the three events').to.deep.equal([]);
    await runtime.shutdown();
    expect(steps).to.deep.equal([
      'source paused',
      'sink got a batch',
      'bell closed',
      'source acked',
      'source acked',
      'source acked',
      'sink closed',
      'source closed',
    ]);
  });
});
