import { expect } from 'chai';
import { percentileNode } from '../../src/pipeline/operators/percentile';
import { UID, ev, testContext, testScheduler } from './helpers';

describe('qos::percentile', () => {
  // the draw is (ingestNs % 65535) / 65535: 64000 draws about 0.98, 100 about 0.0015
  const high = (n: number) => ev(n, n, { ingestNs: 64000n });
  const low = (n: number) => ev(n, n, { ingestNs: 100n });
  const own = <T extends object>(e: T) => ({ ...e, transactional: true, opMeta: { [UID]: true } });

  it('should pass everything until bad insights lower the share, and recover on good ones', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const node = percentileNode({ timeout: 10, step_down: 0.05, step_up: 0.05 }, testContext(s));
      const bad = { kind: 'fail' as const, event: own(ev(1)), from: 'x' };
      const good = { kind: 'ack' as const, event: own(ev(1)), from: 'x' };
      s.schedule(() => expect(node.onInsight?.(bad)).to.equal(bad), 1);
      s.schedule(() => node.onInsight?.(good), 4);
      const e1 = cold('a-bc-d|', { a: high(1), b: high(2), c: low(3), d: high(4) });
      const e1subs = ' ^-----!';
      expectObservable(node.apply(e1)).toBe('A-BC-D|', {
        A: { port: 'out', event: own(high(1)) },
        B: { port: 'overflow', event: own(high(2)) },
        C: { port: 'out', event: own(low(3)) },
        D: { port: 'out', event: own(high(4)) },
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should ignore insights about events it did not handle', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const node = percentileNode({ timeout: 10 }, testContext(s));
      s.schedule(() => node.onInsight?.({ kind: 'fail', event: ev(9), from: 'x' }), 1);
      expectObservable(node.apply(cold('--a|', { a: high(1) }))).toBe('--A|', { A: { port: 'out', event: own(high(1)) } });
    });
  });
});
