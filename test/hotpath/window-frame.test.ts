import { expect } from 'chai';
import { json } from '../../src/codecs/json';
import type { CodecType } from '../../src/codecs/codec';
import { eventually } from '../helpers/runtime';
import { feed, startFlow, stopFlowsAfterEach } from './flow-harness';

/**
 * window::aggregate on undecoded json frames (window/expressions.ts
 * `EventScope`): when its expressions read only top-level fields, it takes
 * them from the frame and the event is never decoded, with the same
 * aggregates as from decoded events. The json codec's decodes are counted.
 */
describe('hot path: window::aggregate reads top-level fields from the frame', function () {
  this.timeout(20000);
  stopFlowsAfterEach();
  let decodes = 0;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- the codec's own create, wrapped below and put back after each test (an arrow: no this)
  const original = json.create;
  beforeEach(() => {
    decodes = 0;
    (json as { create: CodecType['create'] }).create = (...args) => {
      const codec = original(...args);
      return { ...codec, decode: (data, ingestNs) => (decodes++, codec.decode(data, ingestNs)) };
    };
  });
  afterEach(() => ((json as { create: CodecType['create'] }).create = original));

  const window = (aggregate: Record<string, string>) => [
    { id: 'w', type: 'window::aggregate', config: { window: { count: 3 }, group_by: { g: 'event.g' }, aggregate } },
  ];
  const texts = ['{"g":"a","v":9007199254740993,"other":{"x":[1,2]}}', '{"other":"z","g":"a","v":2}', '{"g":"a","v":-5,"g2":"ignored"}'];

  it('counts and sums from the frames without decoding one (a big integer exact)', async () => {
    const flow = await startFlow(window({ n: 'count()', total: 'sum(event.v)', low: 'min(event.v)', seen: 'count_if(has(event.other))' }), [
      { id: 'out', codec: 'json' },
    ]);
    feed(flow, texts);
    await eventually(() => (flow.sent.out ?? []).length === 1, 5000, 'the window');
    expect(flow.sent.out[0].event.data).to.deep.equal({ g: 'a', n: 3, total: 9007199254740990, low: -5, seen: 2 });
    expect(decodes, 'json decodes').to.equal(0);
  });

  it('decodes every event when an expression reads the event whole (collect(event)), with the same result', async () => {
    const flow = await startFlow(window({ n: 'count()', all: 'collect(event)' }), [{ id: 'out', codec: 'json' }]);
    feed(flow, texts);
    await eventually(() => (flow.sent.out ?? []).length === 1, 5000, 'the window');
    expect((flow.sent.out[0].event.data as { n: number }).n).to.equal(3);
    expect(decodes).to.equal(3);
  });
});
