import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { recorder, unique, useSharedKafka, type Recorded } from './helpers';

const n = (e: EddyEvent) => (e.data as { n: number }).n;

/**
 * A kafka onramp commits on ack. An event a filter drops, or one emitted
 * on a port no link takes (a cel error), is handled: the pipeline acks it,
 * so the commit passes it. Before, the committed offset stayed at the
 * first dropped message for ever.
 */
describe('kafka onramp -> runtime::cel filter -> offramp (against the real broker): dropped events are committed', function () {
  this.timeout(60000);
  const kafka = useSharedKafka();
  let runtime: Runtime | undefined;

  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  it('commits past every filtered message and every message whose cel error no link takes', async () => {
    const topic = unique('filtered');
    const group = unique('g');
    await kafka.peer.createTopic(topic);
    // 1..30: multiples of 3 are filtered out; 10, 20 and 30 have no `n` field for the route's expression: err, which no link takes
    const values: { n?: number; m?: number }[] = Array.from({ length: 30 }, (_, i) => ((i + 1) % 10 === 0 ? { m: i + 1 } : { n: i + 1 }));
    await kafka.peer.produce(
      topic,
      values.map((v) => ({ value: JSON.stringify(v) })),
    );
    const recorded: Recorded = { events: [], errors: [], failed: [] };
    runtime = new Runtime({ logger: createLogger('silent') }).registerOfframp(recorder(recorded));
    await runtime.start();
    const config = {
      group_id: group,
      topics: [topic],
      brokers: [kafka.broker],
      rdkafka_options: { 'enable.auto.commit': 'false', 'auto.offset.reset': 'earliest' },
    };
    runtime.publish('onramp', { id: 'in', type: 'kafka', config });
    runtime.publish('pipeline', {
      id: 'p',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [
        { id: 'big', type: 'runtime::cel', config: { filter: '!has(event.n) || event.n % 3 != 0' } },
        { id: 'tag', type: 'runtime::cel', config: { set: { half: 'event.n / 2' } } },
      ],
      links: { in: ['big'], big: ['tag'], tag: ['out'] },
    });
    runtime.publish('offramp', { id: 'outs', type: 'record', config: { port: 'out' } });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/in/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/outs/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main');

    const expected = values.flatMap((v) => (v.n !== undefined && v.n % 3 !== 0 ? [v.n] : []));
    await eventually(() => recorded.events.length === expected.length, 30000, `${expected.length} events delivered`);
    expect(recorded.events.map(n)).to.deep.equal(expected);
    // every message was handled: the commit covers all 30 (the next offset to read is 30)
    await eventually(async () => (await kafka.peer.committed(group, topic))[0] === 30, 30000, 'offset 30 committed');
    const observed = runtime.observe().find((o) => o.url === '/pipeline/p/main')!;
    expect(observed.nodes).to.deep.equal([
      { node: 'big', type: 'runtime::cel', in: 30, out: { out: 21 }, dropped: { filter: 9 } },
      { node: 'tag', type: 'runtime::cel', in: 21, out: { out: 18 }, dropped: { 'unlinked:err': 3 } },
    ]);
  });
});
