import { expect } from 'chai';
import { Subject, map } from 'rxjs';
import { Registries, Runtime, type EddyEvent, type OfframpType, type OnrampType, type OperatorType } from '../../src/index';
import type { Frame } from '../../src/connectors/connector';
import { createLogger } from '../../src/core/logger';
import { eventually } from '../helpers/runtime';

/**
 * An event whose value nothing read or changed between an onramp and an
 * offramp with the same codec leaves as the very frame it came in as
 * (connectors/_shared/lazy-event.ts); anything that may read or change
 * the value makes the offramp encode afresh.
 */
interface Sent {
  payload: Buffer;
  event: EddyEvent;
}

export interface Flow {
  frames: Subject<Frame>;
  /** what each offramp's sink got, by offramp id */
  sent: Record<string, Sent[]>;
  stop(): Promise<void>;
}

const feedType = (frames: Subject<Frame>): OnrampType => ({
  name: 'test::feed',
  defaultCodec: 'json',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => ({ frames }),
});

const recordType = (sent: Record<string, Sent[]>, mutate: boolean): OfframpType => ({
  name: mutate ? 'test::record-and-change' : 'test::record',
  defaultCodec: 'json',
  autoAck: true,
  configSchema: { type: 'object', additionalProperties: false, properties: { id: { type: 'string' } } },
  create: (config) => ({
    send(payloads, event) {
      (sent[(config as { id: string }).id] ??= []).push({ payload: payloads[0], event });
      // a sink that changes the value it was handed (nothing builtin does; nothing forbids it)
      if (mutate) (event.data as Record<string, unknown>).changed = true;
    },
  }),
});

/** changes the value in place and forwards the same event object */
const changeInPlace: OperatorType = {
  name: 'test::change',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () =>
    map((event: EddyEvent) => {
      (event.data as Record<string, unknown>).seen = 1;
      return event;
    }),
};

/** reads the value, forwards the event untouched */
const readOnly: OperatorType = {
  name: 'test::read',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  create: () => map((event: EddyEvent) => (JSON.stringify(event.data), event)),
};

export async function startFlow(
  nodes: { id: string; type: string; config?: Record<string, unknown> }[],
  offramps: { id: string; codec: string; changes?: boolean }[],
  onrampCodec = 'json',
  extend: (registries: Registries) => void = () => {},
): Promise<Flow> {
  const frames = new Subject<Frame>();
  const sent: Record<string, Sent[]> = {};
  const registries = Registries.withBuiltins();
  extend(registries);
  registries.onramps.register('test::feed', feedType(frames));
  registries.offramps.register('test::record', recordType(sent, false));
  registries.offramps.register('test::record-and-change', recordType(sent, true));
  registries.operators.register('test::change', changeInPlace);
  registries.operators.register('test::read', readOnly);
  const runtime = new Runtime({ registries, logger: createLogger('silent') });
  await runtime.start();
  const links: Record<string, string[]> = { in: [nodes[0].id] };
  nodes.forEach((n, i) => (links[n.id] = [i + 1 < nodes.length ? nodes[i + 1].id : 'out']));
  runtime.publish('onramp', { id: 'src', type: 'test::feed', codec: onrampCodec, config: {} });
  runtime.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
  for (const o of offramps) {
    runtime.publish('offramp', { id: o.id, type: o.changes ? 'test::record-and-change' : 'test::record', codec: o.codec, config: { id: o.id } });
  }
  // decode errors go through a pipeline of their own to an offramp recorded as `err`
  runtime.publish('pipeline', { id: 'errs', interface: { inputs: ['in'], outputs: ['out'] }, nodes: passthrough, links: { in: ['pass'], pass: ['out'] } });
  runtime.publish('offramp', { id: 'err', type: 'test::record', codec: 'json', config: { id: 'err' } });
  runtime.publish('binding', {
    id: 'flow',
    links: {
      '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
      '/onramp/src/{instance}/err': ['/pipeline/errs/{instance}/in'],
      '/pipeline/errs/{instance}/out': ['/offramp/err/{instance}/in'],
      '/pipeline/p/{instance}/out': offramps.map((o) => `/offramp/${o.id}/{instance}/in`),
    },
  });
  await runtime.activate('binding', 'flow', 'main', {});
  return { frames, sent, stop: () => runtime.shutdown() };
}

export const passthrough = [{ id: 'pass', type: 'passthrough' }];

export function feed(flow: Flow, texts: string[]): Buffer[] {
  const buffers = texts.map((t) => Buffer.from(t, 'utf8'));
  for (const data of buffers) flow.frames.next({ stream: 0, data, originUri: 'test://feed' });
  return buffers;
}

describe('hot path: an untouched frame is written out as it came in', function () {
  this.timeout(15000);
  let flow: Flow | undefined;
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  it('json through passthrough: the same bytes, and only when the codec would write exactly them', async () => {
    flow = await startFlow(passthrough, [{ id: 'out', codec: 'json' }]);
    const texts = [
      '{"a":1,"big":12345678901234567890,"text":"é€😀","esc":"\\"\\\\\\n\\u001f"}', // canonical: reused
      '{"a": 1}', // whitespace: re-encoded compact
      '{"a":1,"a":2}', // a repeated key: the last wins
      '{"b":1,"1":2}', // an index key moves first
      '{"x":"\\u00e9\\/"}', // escapes JSON.stringify would not write
      '[-0,1.50,1e2,2.5]', // numbers JS prints differently
    ];
    const frames = feed(flow, texts);
    await eventually(() => (flow!.sent.out ?? []).length === texts.length, 5000, 'every event at the sink');
    const got = flow.sent.out.map((s) => s.payload);
    expect(got[0]).to.equal(frames[0]); // the very frame: no encode
    expect(got.map((b) => b.toString('utf8'))).to.deep.equal([
      texts[0],
      '{"a":1}',
      '{"a":2}',
      '{"1":2,"b":1}',
      '{"x":"é/"}',
      '[0,1.5,100,2.5]',
    ]);
    for (let i = 1; i < texts.length; i++) expect(got[i]).to.not.equal(frames[i]);
  });

  it('an operator that changes the value in place makes the offramp encode afresh', async () => {
    flow = await startFlow([{ id: 'pass', type: 'passthrough' }, { id: 'change', type: 'test::change' }], [{ id: 'out', codec: 'json' }]);
    feed(flow, ['{"a":1}']);
    await eventually(() => (flow!.sent.out ?? []).length === 1, 5000, 'the event at the sink');
    expect(flow.sent.out[0].payload.toString()).to.equal('{"a":1,"seen":1}');
  });

  it('an operator that only reads the value also drops the frame (reading is where a change could start)', async () => {
    flow = await startFlow([{ id: 'read', type: 'test::read' }], [{ id: 'out', codec: 'json' }]);
    const frames = feed(flow, ['{"a":1}']);
    await eventually(() => (flow!.sent.out ?? []).length === 1, 5000, 'the event at the sink');
    expect(flow.sent.out[0].payload).to.not.equal(frames[0]);
    expect(flow.sent.out[0].payload.toString()).to.equal('{"a":1}');
  });

  it('runtime::cel setting a field: the new value is encoded', async () => {
    flow = await startFlow([{ id: 'cel', type: 'runtime::cel', config: { set: { seen: 'event.a + 1' } } }], [{ id: 'out', codec: 'json' }]);
    feed(flow, ['{"a":1}']);
    await eventually(() => (flow!.sent.out ?? []).length === 1, 5000, 'the event at the sink');
    expect(flow.sent.out[0].payload.toString()).to.equal('{"a":1,"seen":2}');
  });

  it('fan-out: after a sink that changes the value, the next offramp encodes what it now holds', async () => {
    flow = await startFlow(passthrough, [
      { id: 'first', codec: 'json', changes: true },
      { id: 'second', codec: 'json' },
    ]);
    const frames = feed(flow, ['{"a":1}']);
    await eventually(() => (flow!.sent.first ?? []).length === 1 && (flow!.sent.second ?? []).length === 1, 5000, 'both sinks');
    expect(flow.sent.first[0].payload).to.equal(frames[0]);
    expect(flow.sent.second[0].payload.toString()).to.equal('{"a":1,"changed":true}');
  });

  it('another codec at the offramp encodes: json in, string out', async () => {
    flow = await startFlow(passthrough, [{ id: 'out', codec: 'string' }]);
    const frames = feed(flow, ['"text"']);
    await eventually(() => (flow!.sent.out ?? []).length === 1, 5000, 'the event at the sink');
    expect(flow.sent.out[0].payload).to.not.equal(frames[0]);
    expect(flow.sent.out[0].payload.toString()).to.equal('text');
  });

  it('string through passthrough: every frame is its own encoding (BOM and non-ASCII included)', async () => {
    flow = await startFlow(passthrough, [{ id: 'out', codec: 'string' }], 'string');
    const frames = feed(flow, ['\uFEFFé€😀 plain', '']);
    await eventually(() => (flow!.sent.out ?? []).length === 2, 5000, 'the events at the sink');
    expect(flow.sent.out[0].payload).to.equal(frames[0]);
    expect(flow.sent.out[1].payload).to.equal(frames[1]);
  });

  it('msgpack through passthrough: its own form reused, a wider map header re-encoded', async () => {
    flow = await startFlow(passthrough, [{ id: 'out', codec: 'msgpack' }], 'msgpack');
    const own = Buffer.from('82a16101a362696ecf8000000000000001', 'hex'); // {a: 1, big: 2^63 + 1}
    const wide = Buffer.from('de0001a16101', 'hex'); // {a: 1} with a map 16 header
    for (const data of [own, wide]) flow.frames.next({ stream: 0, data, originUri: 'test://feed' });
    await eventually(() => (flow!.sent.out ?? []).length === 2, 5000, 'the events at the sink');
    expect(flow.sent.out[0].payload).to.equal(own);
    expect(flow.sent.out[1].payload.toString('hex')).to.equal('81a16101');
  });
});
