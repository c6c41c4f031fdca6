import { expect } from 'chai';
import type { Insight } from '../../src/core/event';
import { backpressureNode } from '../../src/pipeline/operators/backpressure';
import { PIPELINE, UID, ev, testContext, testScheduler } from './helpers';

describe('qos::backpressure', () => {
  const own = (n: number) => ({ ...ev(n), transactional: true, opMeta: { [UID]: true } });

  it('should mark events transactional and route them to out while healthy', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const node = backpressureNode({ timeout: 100 }, testContext(s));
      const e1 = cold('-a-b-|', { a: ev(1), b: ev(2) });
      const e1subs = ' ^----!';
      expectObservable(node.apply(e1)).toBe('-A-B-|', { A: { port: 'out', event: own(1) }, B: { port: 'out', event: own(2) } });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should overflow for the back-off step after a fail, then probe again', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const ctx = testContext(s);
      const node = backpressureNode({ timeout: 100, steps: [5, 20] }, ctx);
      const fail: Insight = { kind: 'fail', event: own(1), from: '/offramp/o/01' };
      s.schedule(() => expect(node.onInsight?.(fail)).to.equal(fail), 1);
      const e1 = cold('a-b-c--d--|', { a: ev(1), b: ev(2), c: ev(3), d: ev(4) });
      // fail at 1: back off 5 ms, until 6; d at 7 is the probe
      expectObservable(node.apply(e1)).toBe('A-B-C--D--|', {
        A: { port: 'out', event: own(1) },
        B: { port: 'overflow', event: own(2) },
        C: { port: 'overflow', event: own(3) },
        D: { port: 'out', event: own(4) },
      });
    });
  });

  it('should treat a slow ack as bad and a quick ack as good', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const node = backpressureNode({ timeout: 10, steps: [50] }, testContext(s));
      s.schedule(() => node.onInsight?.({ kind: 'ack', event: own(1), from: 'x', meta: { time: 11 } }), 1);
      s.schedule(() => node.onInsight?.({ kind: 'ack', event: own(2), from: 'x', meta: { time: 3 } }), 3);
      const e1 = cold('a-b-c|', { a: ev(1), b: ev(2), c: ev(3) });
      expectObservable(node.apply(e1)).toBe('A-B-C|', {
        A: { port: 'out', event: own(1) },
        B: { port: 'overflow', event: own(2) },
        C: { port: 'out', event: own(3) },
      });
    });
  });

  it('should trigger the upstream breaker on the first bad insight and restore it via the scheduler', () => {
    const s = testScheduler();
    const ctx = testContext(s);
    s.run(({ cold, expectObservable }) => {
      const node = backpressureNode({ timeout: 100, steps: [5], circuit_breaker: true }, ctx);
      const fail: Insight = { kind: 'fail', event: own(1), from: 'x' };
      s.schedule(() => node.onInsight?.(fail), 1);
      s.schedule(() => node.onInsight?.(fail), 2);
      s.schedule(() => expect(ctx.raised.map((i) => i.kind)).to.deep.equal(['trigger']), 6);
      expectObservable(node.apply(cold('a---------|', { a: ev(1) }))).toBe('A---------|', { A: { port: 'out', event: own(1) } });
    });
    const from = `${PIPELINE}/op`;
    expect(ctx.raised).to.deep.equal([
      { kind: 'trigger', from },
      { kind: 'restore', from },
    ]);
  });

  it('should pass insights about other events unchanged and swallow its own trigger', () => {
    const s = testScheduler();
    const node = backpressureNode({ timeout: 100 }, testContext(s));
    const foreign: Insight = { kind: 'fail', event: ev(1), from: 'x' };
    const mine: Insight = { kind: 'trigger', event: own(1), from: 'x' };
    expect(node.onInsight?.(foreign)).to.equal(foreign);
    expect(node.onInsight?.(mine)).to.equal(null);
  });
});
