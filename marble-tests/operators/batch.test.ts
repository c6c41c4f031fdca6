import { expect } from 'chai';
import type { EddyEvent } from '../../src/core/event';
import { batchEvent, batchEvents } from '../../src/pipeline/operators/batch';
import { UID, ev, testScheduler } from './helpers';

const entry = (e: EddyEvent) => ({ data: { value: e.data, meta: e.meta, ingest_ns: e.ingestNs } });

describe('generic::batch', () => {
  const [a, b, c, d] = [1, 2, 3, 4].map((n) => ev(n));

  it('should emit a batch every `count` events', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('a-b-c-d-|', { a, b, c, d });
      const e1subs = ' ^-------!';
      const expected = '--x---y-|';
      expectObservable(e1.pipe(batchEvents({ count: 2 }, UID, s))).toBe(expected, {
        x: batchEvent([a, b], { uid: UID, seq: 1 }),
        y: batchEvent([c, d], { uid: UID, seq: 2 }),
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should flush a partial batch after `timeout` ms even on an idle stream', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('a-b---------c-----------|', { a, b, c });
      const e1subs = ' ^-----------------------!';
      const expected = '-----x-----------y------|';
      expectObservable(e1.pipe(batchEvents({ count: 3, timeout: 5 }, UID, s))).toBe(expected, {
        x: batchEvent([a, b], { uid: UID, seq: 1 }),
        y: batchEvent([c], { uid: UID, seq: 2 }),
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should flush what is left when the source completes', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const e1 = cold('a-|', { a });
      expectObservable(e1.pipe(batchEvents({ count: 5 }, UID, s))).toBe('--(x|)', {
        x: batchEvent([a], { uid: UID, seq: 1 }),
      });
    });
  });

  it('should cancel its timer on unsubscribe', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('a-------|', { a });
      const unsub = '  ---!';
      const e1subs = ' ^--!';
      expectObservable(e1.pipe(batchEvents({ count: 5, timeout: 5 }, UID, s)), unsub).toBe('----');
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
    expect(s.actions.length).to.equal(0);
  });

  it('should track every member id, flattening nested batches, and be transactional if any member was', () => {
    const inner = batchEvent([ev(7), ev(8)], { uid: 5, seq: 1 });
    const t = ev(9, 'z', { transactional: true, opMeta: { 42: 'x' } });
    const out = batchEvent([inner, t], { uid: UID, seq: 3 });
    expect(out).to.deep.equal({
      id: { uid: UID, seq: 3 },
      data: [entry(inner), entry(t)],
      meta: {},
      ingestNs: inner.ingestNs,
      originUri: inner.originUri,
      isBatch: true,
      tracked: [ev(7).id, ev(8).id, t.id],
      transactional: true,
      opMeta: { 42: 'x' },
    });
  });
});
