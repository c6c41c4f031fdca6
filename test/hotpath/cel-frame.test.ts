import { expect } from 'chai';
import { eventually } from '../helpers/runtime';
import { feed, startFlow, stopFlowsAfterEach, type Flow } from './flow-harness';

/**
 * runtime::cel on undecoded json frames (operators/cel.ts `eventData`):
 * expressions that read only top-level fields (`event.a`, `has(event.a)`)
 * get them from the frame, and an event whose data they do not change goes
 * out as the very frame it came in as (the offramp gets the same Buffer).
 * Anything else decodes the event as before.
 */

const classify = {
  class: 'event.application in ["app1","app2"] ? "apps" : "tag1" in event.tags ? "tagged" : "default"',
  rate: 'event.application == "app1" ? 1250 : 250',
  dimensions: 'has(event.host) ? event.host : "none"',
};

async function run(flow: Flow, texts: string[], port = 'out', count = texts.length): Promise<Buffer[]> {
  const frames = feed(flow, texts);
  await eventually(() => (flow.sent[port] ?? []).length === count, 5000, `${count} events at ${port}`);
  return frames;
}

describe('hot path: runtime::cel reads top-level fields from the frame', function () {
  this.timeout(20000);
  stopFlowsAfterEach();

  it('meta from top-level fields, then grouper::bucket: the frame goes out as it came, meta set', async () => {
    const flow = await startFlow(
      [
        { id: 'cel', type: 'runtime::cel', config: { meta: classify } },
        { id: 'bucket', type: 'grouper::bucket' },
      ],
      [{ id: 'out', codec: 'json' }],
    );
    const texts = [
      '{"application":"app1","tags":["x"],"host":"h1","big":9007199254740993,"s":"é\\"😀"}',
      '{"application":"app9","tags":["tag1"],"nested":{"application":"app1"}}',
      '{"application":"app9","tags":[],"host":null}',
    ];
    const frames = await run(flow, texts);
    const sent = flow.sent.out;
    for (let i = 0; i < texts.length; i++) expect(sent[i].payload, texts[i]).to.equal(frames[i]); // the very Buffer: never decoded or encoded
    expect(sent.map((s) => s.event.meta)).to.deep.equal([
      { class: 'apps', rate: 1250, dimensions: 'h1' },
      { class: 'tagged', rate: 250, dimensions: 'none' },
      { class: 'default', rate: 250, dimensions: 'none' }, // has() of a null field is false, as on a decoded event
    ]);
  });

  it('an expression that reads the whole event decodes it (size(event)); the result is the same', async () => {
    const flow = await startFlow([{ id: 'cel', type: 'runtime::cel', config: { meta: { n: 'size(event)', a: 'event.a' } } }], [{ id: 'out', codec: 'json' }]);
    const frames = await run(flow, ['{"a":1,"b":2}']);
    expect(flow.sent.out[0].payload).to.not.equal(frames[0]);
    expect(flow.sent.out[0].payload.toString()).to.equal('{"a":1,"b":2}');
    expect(flow.sent.out[0].event.meta).to.deep.equal({ n: 2, a: 1 });
  });

  it('filter and route on top-level fields: the kept events leave as their frames, on their ports', async () => {
    const flow = await startFlow(
      [{ id: 'cel', type: 'runtime::cel', config: { filter: 'event.keep', meta: { k: 'event.k' } } }],
      [{ id: 'out', codec: 'json' }],
    );
    const frames = await run(flow, ['{"keep":false,"k":1}', '{"keep":true,"k":2}', '{"k":3,"keep":true}'], 'out', 2);
    expect(flow.sent.out.map((s) => s.payload)).to.deep.equal([frames[1], frames[2]]);
    expect(flow.sent.out[0].payload).to.equal(frames[1]);
    expect(flow.sent.out.map((s) => s.event.meta.k)).to.deep.equal([2, 3]);
  });

  it('a frame that is not an object: decoded, and the error is the one a decoded event gives', async () => {
    const flow = await startFlow([{ id: 'cel', type: 'runtime::cel', config: { meta: { a: 'event.a' } } }], [{ id: 'out', codec: 'json' }]);
    // the node's err port is not linked in this flow: the good event after it proves the bad one was handled
    const frames = await run(flow, ['[1,2]', '{"a":"x"}'], 'out', 1);
    expect(flow.sent.out[0].payload).to.equal(frames[1]);
    expect(flow.sent.out[0].event.meta).to.deep.equal({ a: 'x' });
  });
});

describe('runtime::cel value: the result replaces the event data', function () {
  this.timeout(20000);
  stopFlowsAfterEach();

  it('builds a new record from top-level fields; integers beyond 2^53 stay exact on the way out', async () => {
    const flow = await startFlow(
      [
        {
          id: 'cel',
          type: 'runtime::cel',
          config: { value: '{"app": event.application, "id": event.id, "next": event.id + 1, "ms": event.duration / 1000000}' },
        },
      ],
      [{ id: 'out', codec: 'json' }],
    );
    await run(flow, ['{"application":"app1","id":9007199254740993,"duration":2500000000,"other":[1]}']);
    expect(flow.sent.out[0].payload.toString()).to.equal('{"app":"app1","id":9007199254740993,"next":9007199254740994,"ms":2500}');
  });

  it('a value that is not an object (a string, a list) becomes the data', async () => {
    const flow = await startFlow([{ id: 'cel', type: 'runtime::cel', config: { value: 'event.tags.filter(t, t != "b")' } }], [{ id: 'out', codec: 'json' }]);
    await run(flow, ['{"tags":["a","b","c"]}']);
    expect(flow.sent.out[0].payload.toString()).to.equal('["a","c"]');
  });

  it('set and remove apply to the new value; every expression sees the event as it arrived', async () => {
    const flow = await startFlow(
      [{ id: 'cel', type: 'runtime::cel', config: { value: '{"a": event.a, "b": 2}', set: { c: 'event.a + 10' }, remove: ['b'] } }],
      [{ id: 'out', codec: 'json' }],
    );
    await run(flow, ['{"a":1,"z":0}']);
    expect(flow.sent.out[0].payload.toString()).to.equal('{"a":1,"c":11}');
  });

  it('reading the whole event: value event.nested', async () => {
    const flow = await startFlow([{ id: 'cel', type: 'runtime::cel', config: { value: 'event' } }], [{ id: 'out', codec: 'json' }]);
    await run(flow, ['{"n":18446744073709551615}']);
    expect(flow.sent.out[0].payload.toString()).to.equal('{"n":18446744073709551615}');
  });
});
