import { expect } from 'chai';
import { Subject } from 'rxjs';
import { createLogger } from '../../src/core/logger';
import type { EddyEvent, Insight, Meta } from '../../src/core/event';
import type { ContraflowTarget } from '../../src/contraflow/contraflow';
import { OfframpRuntime } from '../../src/ramps/offramp';
import { cbActions, cbOfframp } from '../../src/connectors/cb/offramp';
import { batchEvent } from '../../src/pipeline/operators/batch';
import { json } from '../../src/codecs/json';
import { cbOnramp } from '../../src/connectors/cb/onramp';
import { SchemaValidator } from '../../src/schema/artefacts';
import { testScheduler } from '../../marble-tests/helpers';

const logger = createLogger('silent');

const event = (seq: number, data: unknown, meta: Meta = {}, transactional = false): EddyEvent => ({
  id: { uid: 1, seq },
  data,
  meta,
  ingestNs: 0n,
  originUri: 'svc-test://localhost',
  isBatch: false,
  transactional,
});

/** What cbActions picks, as `delivery/breaker` (`-` for none). */
const pick = (e: EddyEvent) => {
  const a = cbActions(e);
  return `${a.delivery ?? '-'}/${a.breaker ?? '-'}`;
};

describe('cb offramp: which insights an event asks for', () => {
  const cases: [string, unknown, string][] = [
    ['a single ack', 'ack', 'ack/-'],
    ['a single fail', 'fail', 'fail/-'],
    ['ack wins over fail, in either order', ['fail', 'ack'], 'ack/-'],
    ['ack wins over fail (ack first)', ['ack', 'fail'], 'ack/-'],
    ['close means trigger', 'close', '-/trigger'],
    ['trigger', 'trigger', '-/trigger'],
    ['open means restore', 'open', '-/restore'],
    ['restore', 'restore', '-/restore'],
    ['close wins over open', ['open', 'close'], '-/trigger'],
    ['trigger wins over restore', ['restore', 'trigger', 'open'], '-/trigger'],
    ['one of each kind at most', ['fail', 'close'], 'fail/trigger'],
    ['repeats count once', ['ack', 'ack', 'open', 'restore'], 'ack/restore'],
    ['unknown names are ignored', ['nope', 'fail'], 'fail/-'],
    ['names are case sensitive', 'ACK', '-/-'],
    ['an empty list asks for nothing', [], '-/-'],
    ['a number asks for nothing', 42, '-/-'],
  ];
  for (const [what, cb, expected] of cases) {
    it(`${what}: ${JSON.stringify(cb)} -> ${expected}`, () => {
      expect(pick(event(1, { cb }))).to.equal(expected);
      // the same payload in metadata
      expect(pick(event(1, {}, { cb }))).to.equal(expected);
    });
  }

  it('reports the names it ignored', () => {
    expect(cbActions(event(1, { cb: ['ack', 'nope', 7] })).unknown).to.deep.equal(['nope', '7']);
    expect(cbActions(event(1, { cb: { ack: true } })).unknown).to.deep.equal(['{"ack":true}']);
    expect(cbActions(event(1, { cb: 'ack' })).unknown).to.deep.equal([]);
  });

  it('takes metadata `cb` first and ignores data `cb` then', () => {
    expect(pick(event(1, { cb: 'fail' }, { cb: 'ack' }))).to.equal('ack/-');
    expect(pick(event(1, { cb: ['ack', 'close'] }, { cb: 'fail' }))).to.equal('fail/-');
    expect(pick(event(1, { cb: 'close' }, { cb: ['open'] }))).to.equal('-/restore');
    // null or absent metadata falls back to the data
    expect(pick(event(1, { cb: 'fail' }, { cb: null }))).to.equal('fail/-');
    expect(pick(event(1, { cb: 'fail' }, { other: 'ack' }))).to.equal('fail/-');
  });

  it('asks for nothing without a `cb` anywhere, and copes with data that is not a record', () => {
    expect(pick(event(1, { snot: 'badger' }))).to.equal('-/-');
    expect(pick(event(1, 'ack'))).to.equal('-/-');
    expect(pick(event(1, null))).to.equal('-/-');
    expect(pick(event(1, ['ack']))).to.equal('-/-');
  });

  it('looks at every member of a batch (member metadata first) and pools them: one of each kind at most', () => {
    const members = [event(1, { cb: 'fail' }), event(2, { cb: 'fail' }, { cb: 'ack' }), event(3, { cb: ['open'] }), event(4, { cb: 'close' })];
    expect(pick(batchEvent(members, { uid: 9, seq: 1 }))).to.equal('ack/trigger');
    expect(pick(batchEvent([event(1, { cb: 'fail' }), event(2, { cb: 'open' })], { uid: 9, seq: 2 }))).to.equal('fail/restore');
    expect(pick(batchEvent([event(1, { n: 1 }), event(2, { n: 2 })], { uid: 9, seq: 3 }))).to.equal('-/-');
    // a batch's members decide, not a `cb` key the batch array cannot have
    expect(pick(batchEvent([event(1, { cb: 'ack' })], { uid: 9, seq: 4 }))).to.equal('ack/-');
  });
});

/** A stand-in pipeline: records the contraflow the offramp sends it. */
function target(url: string, seen: string[]): ContraflowTarget {
  return {
    url,
    contraflow: (i: Insight) => {
      const about = i.event ? ` ${(i.event.tracked ?? [i.event.id]).map((id) => `${id.uid}:${id.seq}`).join(',')}` : '';
      seen.push(`${url} ${i.kind}${about}`);
    },
  };
}

async function cbRuntime(): Promise<OfframpRuntime> {
  const offramp = new OfframpRuntime({
    ctx: { url: '/offramp/cb/test', uid: 50, hostname: 'test', logger, requestExit: () => undefined },
    codec: json.create(),
    postprocessors: [],
    autoAck: cbOfframp.autoAck,
    maxInFlight: 16,
    createSink: (ctx) => cbOfframp.create({}, ctx),
  });
  await offramp.start();
  return offramp;
}

describe('cb offramp: insights back to the delivering pipeline', () => {
  it('is not auto-acking and defaults to json', () => {
    expect(cbOfframp.autoAck).to.equal(false);
    expect(cbOfframp.defaultCodec).to.equal('json');
  });

  it('sends the insights, delivery first, to the pipeline that delivered the event only, transactional or not', async () => {
    const offramp = await cbRuntime();
    const seen: string[] = [];
    const a = offramp.connect(target('/pipeline/a/1', seen));
    const b = offramp.connect(target('/pipeline/b/1', seen));
    a.next(event(1, { cb: ['close', 'fail'] }));
    b.next(event(2, { cb: 'ack' }, {}, true));
    a.next(event(3, { snot: 'badger' }, {}, true)); // nothing asked, nothing sent: no auto-ack
    b.next(event(4, { cb: 'open' }));
    expect(seen).to.deep.equal(['/pipeline/a/1 fail 1:1', '/pipeline/a/1 trigger 1:1', '/pipeline/b/1 ack 1:2', '/pipeline/b/1 restore 1:4']);
    expect(offramp.counters.out).to.equal(4);
    await offramp.close();
  });

  it('acks a whole batch with its tracked member ids', async () => {
    const offramp = await cbRuntime();
    const seen: string[] = [];
    const a = offramp.connect(target('/pipeline/a/1', seen));
    a.next(batchEvent([event(1, { cb: 'fail' }), event(2, { cb: 'ack' }), event(3, {})], { uid: 9, seq: 1 }));
    expect(seen).to.deep.equal(['/pipeline/a/1 ack 1:1,1:2,1:3']);
    await offramp.close();
  });

  it('marble: one insight of each kind per event, in event order', async () => {
    const offramp = await cbRuntime();
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const insights = new Subject<string>();
      const observer = offramp.connect({ url: '/pipeline/p/1', contraflow: (i) => insights.next(`${i.kind}:${i.event?.id.seq}`) });
      const values: Record<string, EddyEvent> = {
        a: event(1, { cb: 'ack' }),
        b: event(2, { cb: ['fail', 'ack', 'close', 'open'] }),
        c: event(3, { cb: 'restore' }, {}, true),
        d: event(4, { cb: 'fail' }, { cb: ['ack'] }),
        e: event(5, { nothing: true }, {}, true),
      };
      // one frame in, so the expectation is subscribed before the first event
      cold('-a-b-----c-d-e|', values).subscribe(observer);
      expectObservable(insights).toBe('-a-(bc)--d-f', {
        a: 'ack:1',
        b: 'ack:2',
        c: 'trigger:2',
        d: 'restore:3',
        f: 'ack:4',
      });
    });
    await offramp.close();
  });
});

describe('cb onramp config', () => {
  it('requires source, defaults timeout to 10000 ms, rejects unknown keys, and describes every key', () => {
    const validator = new SchemaValidator();
    const config: Record<string, unknown> = { source: 'in.json' };
    validator.check(cbOnramp.configSchema, config, 'config');
    expect(config).to.deep.equal({ source: 'in.json', timeout: 10000 });
    expect(() => validator.check(cbOnramp.configSchema, {}, 'config')).to.throw(/source/);
    expect(() => validator.check(cbOnramp.configSchema, { source: 'x', expect_batched: true }, 'config')).to.throw(/expect_batched/);
    expect(() => validator.check(cbOfframp.configSchema, { anything: 1 }, 'config')).to.throw(/anything/);
    const properties = cbOnramp.configSchema.properties as Record<string, { description?: string }>;
    for (const [key, schema] of Object.entries(properties)) expect(schema.description, key).to.be.a('string');
    expect(cbOnramp.defaultCodec).to.equal('json');
  });
});
