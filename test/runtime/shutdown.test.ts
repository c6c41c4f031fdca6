import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
});
