import { expect } from 'chai';
import { withError } from '../../src/pipeline/operators/_shared/support';
import { map } from 'rxjs';
import type { Codec, CodecType, EddyEvent, OperatorType, Registries } from '../../src/index';
import { LazyEvent, LazyMember, LazyPolicy, batchMember, ownData, unreadMemberFrame } from '../../src/core/lazy-event';
import { json } from '../../src/codecs/json';
import { eventually } from '../helpers/runtime';
import { feed, passthrough, startFlow, stopFlowsAfterEach } from './flow-harness';

/**
 * Lazy decoding (core/lazy-event.ts): an onramp whose codec
 * vouches for a frame (`roundTrips`) leaves it undecoded until something
 * reads the event's data; an event nobody reads is never decoded.
 */

/** json, counting its decodes and frame checks; named apart so only these ramps use it */
function countingJson(): { type: CodecType; counts: { decode: number; roundTrips: number } } {
  const counts = { decode: 0, roundTrips: 0 };
  const type: CodecType = {
    name: 'test::counting-json',
    create: (): Codec => {
      const inner = json.create();
      return {
        name: 'test::counting-json',
        decode: (data, ingestNs) => (counts.decode++, inner.decode(data, ingestNs)),
        encode: (value) => inner.encode(value),
        roundTrips: (frame) => (counts.roundTrips++, inner.roundTrips!(frame)),
      };
    },
  };
  return { type, counts };
}

/** copies each event with spread, as application operators may */
const spreadCopy: OperatorType = {
  name: 'test::spread',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => map((event: EddyEvent) => ({ ...event, meta: { ...event.meta, copied: true } })),
};

/** reads the value of every member of a batch event */
const memberReader: OperatorType = {
  name: 'test::reads-members',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => map((event: EddyEvent) => ((event.data as { data: { value: unknown } }[]).forEach((entry) => JSON.stringify(entry.data.value)), event)),
};

/** reads every event's value */
const reader: OperatorType = {
  name: 'test::reads',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => map((event: EddyEvent) => (JSON.stringify(event.data), event)),
};

describe('hot path: lazy decoding', function () {
  this.timeout(20000);
  stopFlowsAfterEach();

  function withCounting(counting: ReturnType<typeof countingJson>) {
    return (registries: Registries) => {
      registries.codecs.register('test::counting-json', counting.type);
      registries.operators.register('test::spread', spreadCopy);
      registries.operators.register('test::reads', reader);
      registries.operators.register('test::reads-members', memberReader);
    };
  }

  it('an event nobody reads is never decoded: the offramp writes the frame it came in as', async () => {
    const counting = countingJson();
    const flow = await startFlow(
      passthrough,
      [
        { id: 'a', codec: 'test::counting-json' },
        { id: 'b', codec: 'test::counting-json' },
      ],
      'test::counting-json',
      withCounting(counting),
    );
    const frames = feed(flow, ['{"a":1}', '[1,"x",null]', '"text"']);
    await eventually(() => (flow.sent.b ?? []).length === 3, 5000, 'every event at both sinks');
    expect(counting.counts).to.deep.equal({ decode: 0, roundTrips: 3 });
    for (const id of ['a', 'b']) flow.sent[id].forEach((s, i) => expect(s.payload).to.equal(frames[i]));
  });

  it('a frame the codec does not vouch for is decoded at once: an invalid one goes to err, a non-canonical one is encoded afresh', async () => {
    const flow = await startFlow(passthrough, [{ id: 'out', codec: 'json' }]);
    feed(flow, ['{"a":tru}', '{"a":1,}', '[1 2]', '{"a" : 1}', '{"a":1}']);
    await eventually(() => (flow.sent.out ?? []).length === 2 && (flow.sent.err ?? []).length === 3, 5000, 'two events out, three errors');
    expect(flow.sent.out.map((s) => s.payload.toString())).to.deep.equal(['{"a":1}', '{"a":1}']);
    expect(flow.sent.err.map((s) => (s.event.data as { raw: string }).raw)).to.deep.equal(['{"a":tru}', '{"a":1,}', '[1 2]']);
  });

  it('an operator that copies events with spread keeps their data', async () => {
    const counting = countingJson();
    const flow = await startFlow([{ id: 'copy', type: 'test::spread' }], [{ id: 'out', codec: 'json' }], 'test::counting-json', withCounting(counting));
    feed(flow, ['{"a":1}', '"s"']);
    await eventually(() => (flow.sent.out ?? []).length === 2, 5000, 'both events at the sink');
    expect(flow.sent.out.map((s) => s.payload.toString())).to.deep.equal(['{"a":1}', '"s"']);
    expect(flow.sent.out.map((s) => s.event.meta.copied)).to.deep.equal([true, true]);
  });

  it('generic::batch keeps unread members unread: the offramp writes each member as the frame it came in as', async () => {
    const counting = countingJson();
    const flow = await startFlow(
      [{ id: 'batch', type: 'generic::batch', config: { count: 3 } }],
      [{ id: 'out', codec: 'test::counting-json' }],
      'test::counting-json',
      withCounting(counting),
    );
    const frames = feed(flow, ['{"a":1}', '[1,"x",null]', '"text"']);
    await eventually(() => (flow.sent.out ?? []).length === 3, 5000, 'the three members at the sink');
    expect(counting.counts).to.deep.equal({ decode: 0, roundTrips: 3 });
    flow.sent.out.forEach((s, i) => expect(s.payload).to.equal(frames[i]));
  });

  it('a batch member read after batching is decoded then, and encoded afresh', async () => {
    const counting = countingJson();
    const flow = await startFlow(
      [
        { id: 'batch', type: 'generic::batch', config: { count: 2 } },
        { id: 'read', type: 'test::reads-members' },
      ],
      [{ id: 'out', codec: 'test::counting-json' }],
      'test::counting-json',
      withCounting(counting),
    );
    const frames = feed(flow, ['{"a":1}', '{"b":2}']);
    await eventually(() => (flow.sent.out ?? []).length === 2, 5000, 'both members at the sink');
    expect(counting.counts.decode, 'each member decoded once, where it was read').to.equal(2);
    flow.sent.out.forEach((s, i) => {
      expect(s.payload.toString()).to.equal(frames[i].toString());
      expect(s.payload, 'encoded afresh: the read value may have changed').to.not.equal(frames[i]);
    });
  });

  it('an onramp whose events are all read stops checking frames after one round and decodes them at once', async () => {
    const counting = countingJson();
    const flow = await startFlow([{ id: 'read', type: 'test::reads' }], [{ id: 'out', codec: 'json' }], 'test::counting-json', withCounting(counting));
    const texts = Array.from({ length: 1000 }, (_, i) => `{"n":${i}}`);
    feed(flow, texts);
    await eventually(() => (flow.sent.out ?? []).length === 1000, 10000, 'every event at the sink');
    // one round of 256 checked frames, all of them read: the other 744 are decoded without a check
    expect(counting.counts).to.deep.equal({ decode: 1000, roundTrips: 256 });
    expect(flow.sent.out.map((s) => s.payload.toString())).to.deep.equal(texts);
  });
});

describe('LazyMember (a batch member of an unread event)', () => {
  const codec = json.create();
  const make = (text: string) => new LazyEvent({ uid: 1, seq: 1 }, { m: 1 }, 5n, 'test://x', false, Buffer.from(text), codec, new LazyPolicy());

  it('is a plain member to JSON.stringify, spread and Object.keys, in the same key order; reading decodes and forgets the frame', () => {
    const member = batchMember(make('{"a":[1,2]}'));
    expect(member).to.be.instanceOf(LazyMember);
    const entry = { data: member };
    expect(unreadMemberFrame(entry, 'json')!.toString()).to.equal('{"a":[1,2]}');
    expect(unreadMemberFrame(entry, 'msgpack'), 'only to the codec that vouched for it').to.equal(undefined);
    expect(Object.keys(member)).to.deep.equal(['value', 'meta', 'ingest_ns']);
    expect(JSON.stringify(member, (_, v) => (typeof v === 'bigint' ? String(v) : v))).to.equal('{"value":{"a":[1,2]},"meta":{"m":1},"ingest_ns":"5"}');
    expect(unreadMemberFrame(entry, 'json'), 'read by JSON.stringify: the frame is gone').to.equal(undefined);
    expect({ ...member }).to.deep.equal({ value: { a: [1, 2] }, meta: { m: 1 }, ingest_ns: 5n });
  });

  it('a write to value replaces the data and forgets the frame; a read event makes a plain member', () => {
    const member = batchMember(make('{"a":1}'));
    member.value = 'new';
    expect(unreadMemberFrame({ data: member }, 'json')).to.equal(undefined);
    expect(member.value).to.equal('new');
    const read = make('{"a":1}');
    expect(read.data).to.deep.equal({ a: 1 });
    expect(batchMember(read)).to.not.be.instanceOf(LazyMember);
  });
});

describe('LazyEvent', () => {
  const codec = json.create();
  const make = (text: string) => new LazyEvent({ uid: 1, seq: 1 }, { m: 1 }, 5n, 'test://x', false, Buffer.from(text), codec, new LazyPolicy());

  it('decodes on the first read and forgets its frame from then on', () => {
    const event = make('{"a":1}');
    expect(event.untouchedFrame(codec)!.toString()).to.equal('{"a":1}');
    expect(event.data).to.deep.equal({ a: 1 });
    expect(event.untouchedFrame(codec)).to.equal(undefined);
  });

  it('a write replaces the value unread and forgets the frame', () => {
    const event = make('{"a":1}');
    event.data = 'new';
    expect(event.untouchedFrame(codec)).to.equal(undefined);
    expect(event.data).to.equal('new');
  });

  it('withError marks an undecoded event without decoding it or losing its data (grouper::bucket forwards events as they come)', () => {
    const event = make('{"a":1}');
    const marked = withError(event, 'bucket: meta class is missing');
    expect(marked.meta).to.deep.equal({ m: 1, error: 'bucket: meta class is missing' });
    expect(event.meta, 'the original keeps its meta').to.deep.equal({ m: 1 });
    if (!(marked instanceof LazyEvent)) expect.fail('withError made another kind of event');
    expect(marked.untouchedFrame(codec)!.toString(), 'still the frame').to.equal('{"a":1}');
    expect(marked.data).to.deep.equal({ a: 1 });
  });

  it('offers its frame only to a codec of the same name', () => {
    const other: Codec = { ...json.create(), name: 'other' };
    expect(make('1').untouchedFrame(other)).to.equal(undefined);
  });

  it('looks like any event to JSON.stringify, Object.keys and ownData + spread', () => {
    const event = make('{"a":[1,2]}');
    expect(Object.keys(event)).to.not.include.members(['frame', 'value', 'codec', 'policy']);
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- what a spread copies of the event (its own fields, not the data accessor) is what this checks
    const written = JSON.parse(JSON.stringify({ ...event, ingestNs: undefined, toJSON: undefined }));
    expect(written).to.not.have.property('data'); // spread alone misses the accessor: hence ownData
    const viaToJson = JSON.parse(JSON.stringify(event, (_, v) => (typeof v === 'bigint' ? String(v) : v)));
    expect(viaToJson).to.deep.equal({
      id: { uid: 1, seq: 1 },
      meta: { m: 1 },
      ingestNs: '5',
      originUri: 'test://x',
      transactional: false,
      isBatch: false,
      data: { a: [1, 2] },
    });
    const copy = { ...ownData(make('{"b":2}')) };
    expect(copy.data).to.deep.equal({ b: 2 });
  });
});
