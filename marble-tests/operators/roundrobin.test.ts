import { expect } from 'chai';
import type { EddyEvent, Insight } from '../../src/core/event';
import { roundRobinNode } from '../../src/pipeline/operators/roundrobin';
import { PIPELINE, UID, ev, testContext, testScheduler } from './helpers';

describe('qos::roundrobin', () => {
  const to = (port: string, e: EddyEvent, idx: number) => ({ port, event: { ...e, opMeta: { [UID]: idx } } });
  const about = (kind: Insight['kind'], idx: number): Insight => ({ kind, event: { ...ev(0), opMeta: { [UID]: idx } }, from: 'x' });

  it('should spread events over its outputs in turn', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const node = roundRobinNode({ outputs: ['a', 'b'] }, testContext(s));
      const [e1v, e2v, e3v] = [ev(1), ev(2), ev(3)];
      const e1 = cold('-x-y-z-|', { x: e1v, y: e2v, z: e3v });
      const e1subs = ' ^------!';
      expectObservable(node.apply(e1)).toBe('-X-Y-Z-|', { X: to('a', e1v, 0), Y: to('b', e2v, 1), Z: to('a', e3v, 0) });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should skip a triggered output, overflow and trigger upstream when all are closed, and restore when one reopens', () => {
    const s = testScheduler();
    const ctx = testContext(s);
    s.run(({ cold, expectObservable }) => {
      const node = roundRobinNode({ outputs: ['a', 'b'] }, ctx);
      s.schedule(() => expect(node.onInsight?.(about('trigger', 0))).to.equal(null), 1);
      s.schedule(() => node.onInsight?.(about('trigger', 1)), 4);
      s.schedule(() => node.onInsight?.(about('restore', 0)), 6);
      const [v1, v2, v3, v4, v5] = [1, 2, 3, 4, 5].map((n) => ev(n));
      const e1 = cold('--pq-r-s|', { p: v1, q: v2, r: v3, s: v4, t: v5 });
      expectObservable(node.apply(e1)).toBe('--PQ-R-S|', {
        P: to('b', v1, 1),
        Q: to('b', v2, 1),
        R: { port: 'overflow', event: v3 },
        S: to('a', v4, 0),
      });
    });
    const from = `${PIPELINE}/op`;
    expect(ctx.raised).to.deep.equal([
      { kind: 'trigger', from },
      { kind: 'restore', from },
    ]);
  });

  it('should pass acks and breaker signals that are not about its events', () => {
    const node = roundRobinNode({}, testContext(testScheduler()));
    const plain: Insight = { kind: 'trigger', from: '/offramp/o/01' };
    const ack = about('ack', 0);
    expect(node.onInsight?.(plain)).to.equal(plain);
    expect(node.onInsight?.(ack)).to.equal(ack);
  });
});
