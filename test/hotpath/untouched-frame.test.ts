import { expect } from 'chai';
import { eventually } from '../helpers/runtime';
import { feed, passthrough, startFlow, stopFlowsAfterEach } from './flow-harness';

/**
 * An event whose value nothing read or changed between an onramp and an
 * offramp with the same codec leaves as the very frame it came in as
 * (core/lazy-event.ts); anything that may read or change
 * the value makes the offramp encode afresh.
 */

describe('hot path: an untouched frame is written out as it came in', function () {
  this.timeout(15000);
  stopFlowsAfterEach();

  it('json through passthrough: the same bytes, and only when the codec would write exactly them', async () => {
    const flow = await startFlow(passthrough, [{ id: 'out', codec: 'json' }]);
    const texts = [
      '{"a":1,"big":12345678901234567890,"text":"é€😀","esc":"\\"\\\\\\n\\u001f"}', // canonical: reused
      '{"a": 1}', // whitespace: re-encoded compact
      '{"a":1,"a":2}', // a repeated key: the last wins
      '{"b":1,"1":2}', // an index key moves first
      '{"x":"\\u00e9\\/"}', // escapes JSON.stringify would not write
      '[-0,1.50,1e2,2.5]', // numbers JS prints differently
    ];
    const frames = feed(flow, texts);
    await eventually(() => (flow.sent.out ?? []).length === texts.length, 5000, 'every event at the sink');
    const got = flow.sent.out.map((s) => s.payload);
    expect(got[0]).to.equal(frames[0]); // the very frame: no encode
    expect(got.map((b) => b.toString('utf8'))).to.deep.equal([texts[0], '{"a":1}', '{"a":2}', '{"1":2,"b":1}', '{"x":"é/"}', '[0,1.5,100,2.5]']);
    for (let i = 1; i < texts.length; i++) expect(got[i]).to.not.equal(frames[i]);
  });

  it('an operator that changes the value in place makes the offramp encode afresh', async () => {
    const flow = await startFlow(
      [
        { id: 'pass', type: 'passthrough' },
        { id: 'change', type: 'test::change' },
      ],
      [{ id: 'out', codec: 'json' }],
    );
    feed(flow, ['{"a":1}']);
    await eventually(() => (flow.sent.out ?? []).length === 1, 5000, 'the event at the sink');
    expect(flow.sent.out[0].payload.toString()).to.equal('{"a":1,"seen":1}');
  });

  it('an operator that only reads the value also drops the frame (reading is where a change could start)', async () => {
    const flow = await startFlow([{ id: 'read', type: 'test::read' }], [{ id: 'out', codec: 'json' }]);
    const frames = feed(flow, ['{"a":1}']);
    await eventually(() => (flow.sent.out ?? []).length === 1, 5000, 'the event at the sink');
    expect(flow.sent.out[0].payload).to.not.equal(frames[0]);
    expect(flow.sent.out[0].payload.toString()).to.equal('{"a":1}');
  });

  it('runtime::cel setting a field: the new value is encoded', async () => {
    const flow = await startFlow([{ id: 'cel', type: 'runtime::cel', config: { set: { seen: 'event.a + 1' } } }], [{ id: 'out', codec: 'json' }]);
    feed(flow, ['{"a":1}']);
    await eventually(() => (flow.sent.out ?? []).length === 1, 5000, 'the event at the sink');
    expect(flow.sent.out[0].payload.toString()).to.equal('{"a":1,"seen":2}');
  });

  it('fan-out: after a sink that changes the value, the next offramp encodes what it now holds', async () => {
    const flow = await startFlow(passthrough, [
      { id: 'first', codec: 'json', changes: true },
      { id: 'second', codec: 'json' },
    ]);
    const frames = feed(flow, ['{"a":1}']);
    await eventually(() => (flow.sent.first ?? []).length === 1 && (flow.sent.second ?? []).length === 1, 5000, 'both sinks');
    expect(flow.sent.first[0].payload).to.equal(frames[0]);
    expect(flow.sent.second[0].payload.toString()).to.equal('{"a":1,"changed":true}');
  });

  it('another codec at the offramp encodes: json in, string out', async () => {
    const flow = await startFlow(passthrough, [{ id: 'out', codec: 'string' }]);
    const frames = feed(flow, ['"text"']);
    await eventually(() => (flow.sent.out ?? []).length === 1, 5000, 'the event at the sink');
    expect(flow.sent.out[0].payload).to.not.equal(frames[0]);
    expect(flow.sent.out[0].payload.toString()).to.equal('text');
  });

  it('string through passthrough: every frame is its own encoding (BOM and non-ASCII included)', async () => {
    const flow = await startFlow(passthrough, [{ id: 'out', codec: 'string' }], 'string');
    const frames = feed(flow, ['\uFEFFé€😀 plain', '']);
    await eventually(() => (flow.sent.out ?? []).length === 2, 5000, 'the events at the sink');
    expect(flow.sent.out[0].payload).to.equal(frames[0]);
    expect(flow.sent.out[1].payload).to.equal(frames[1]);
  });

  it('msgpack through passthrough: its own form reused, a wider map header re-encoded', async () => {
    const flow = await startFlow(passthrough, [{ id: 'out', codec: 'msgpack' }], 'msgpack');
    const own = Buffer.from('82a16101a362696ecf8000000000000001', 'hex'); // {a: 1, big: 2^63 + 1}
    const wide = Buffer.from('de0001a16101', 'hex'); // {a: 1} with a map 16 header
    for (const data of [own, wide]) flow.frames.next({ stream: 0, data, originUri: 'test://feed' });
    await eventually(() => (flow.sent.out ?? []).length === 2, 5000, 'the events at the sink');
    expect(flow.sent.out[0].payload).to.equal(own);
    expect(flow.sent.out[1].payload.toString('hex')).to.equal('81a16101');
  });
});
