/**
 * A partitioned source that loses partitions (a kafka rebalance) tells the
 * stateful operators downstream, through every pipeline in between: their
 * state of those partitions goes without being emitted, since the new
 * reader counts those events again (OnrampSource.partitionsReleased).
 */
import { expect } from 'chai';
import { Subject } from 'rxjs';
import type { EddyEvent } from '../../../src/core/event';
import type { Frame, OnrampType } from '../../../src/connectors/connector';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { registriesWith, startTwoPipelineFlow, testOfframp } from './helpers';

describe('partitions released by a source', () => {
  let runtime: Runtime | undefined;
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  it('drop their window state through two pipelines: at shutdown only the partitions still read are emitted', async () => {
    const frames = new Subject<Frame>();
    const released = new Subject<string[]>();
    const onramp: OnrampType<Record<string, never>> = {
      name: 'parts',
      defaultCodec: 'json',
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: () => ({ frames, partitionsReleased: released }),
    };
    const got: EddyEvent[] = [];
    const registries = registriesWith([onramp], [testOfframp('collect', (e) => void got.push(e))]);
    // a first pipeline in front, so the release has to travel from one pipeline to the next
    runtime = await startTwoPipelineFlow(
      registries,
      'parts',
      { id: 'count', type: 'window::aggregate', config: { window: { size: '1h' }, time: 'event.ts', group_by: { k: 'event.k' }, aggregate: { n: 'count()' } } },
      'collect',
    );
    const send = (partition: string, ts: number) => frames.next({ stream: partition, partition, value: { k: 'a', ts }, originUri: `test://${partition}` });
    send('t/0', 1);
    send('t/1', 2);
    send('t/1', 3);
    released.next(['t/1']);
    send('t/0', 4);
    await runtime.shutdown();
    runtime = undefined;
    // the open windows come out partial at shutdown: t/0's with its two events; t/1's was dropped at the release
    await eventually(() => got.length >= 1, 5000, 'the partial window');
    expect(got.map((e) => ({ data: e.data, partition: e.partition }))).to.deep.equal([{ data: { k: 'a', n: 2 }, partition: 't/0' }]);
  });
});
