import { bucketNode } from '../../src/pipeline/operators/bucket';
import { ev, testScheduler } from './helpers';

const withMeta = (seq: number, meta: Record<string, unknown>) => ev(seq, { n: seq }, { meta });

describe('grouper::bucket', () => {
  it('should pass `rate` events per time range and send the rest to overflow', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const m = { class: 'c', rate: 2, time_range: 10, windows: 10 };
      const [a, b, c, d] = [1, 2, 3, 4].map((n) => withMeta(n, m));
      // a and b fill the window; c is over the rate; d comes after a and b slid out
      const e1 = cold('ab-c--------d-|', { a, b, c, d });
      const e1subs = ' ^-------------!';
      const expected = 'AB-C--------D-|';
      expectObservable(bucketNode(s).apply(e1)).toBe(expected, {
        A: { port: 'out', event: a },
        B: { port: 'out', event: b },
        C: { port: 'overflow', event: c },
        D: { port: 'out', event: d },
      });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should keep one window per dimension value', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const x = (n: number) => withMeta(n, { class: 'c', rate: 1, dimensions: ['x'] });
      const y = (n: number) => withMeta(n, { class: 'c', rate: 1, dimensions: ['y'] });
      const [a, b, c, d] = [x(1), y(2), x(3), y(4)];
      const e1 = cold('abcd|', { a, b, c, d });
      expectObservable(bucketNode(s).apply(e1)).toBe('ABCD|', {
        A: { port: 'out', event: a },
        B: { port: 'out', event: b },
        C: { port: 'overflow', event: c },
        D: { port: 'overflow', event: d },
      });
    });
  });

  it('should send events without class, or without rate for a new dimension, to err', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const a = withMeta(1, { rate: 1 });
      const b = withMeta(2, { class: 'c' });
      const c = withMeta(3, { class: 'c', rate: 'fast' });
      const e1 = cold('abc|', { a, b, c });
      expectObservable(bucketNode(s).apply(e1)).toBe('ABC|', {
        A: { port: 'err', event: { ...a, meta: { ...a.meta, error: 'bucket: meta class is missing or not a string' } } },
        B: { port: 'err', event: { ...b, meta: { ...b.meta, error: 'bucket: meta rate is missing for a new dimension' } } },
        C: { port: 'err', event: { ...c, meta: { ...c.meta, error: 'bucket: meta rate must be a positive number, got "fast"' } } },
      });
    });
  });

  it('should bound the dimensions of a class by `cardinality`, evicting the least recently used', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const dim = (n: number, d: string) => withMeta(n, { class: 'c', rate: 1, cardinality: 1, dimensions: d });
      // x is evicted by y, so x starts with a fresh window and passes again
      const [a, b, c] = [dim(1, 'x'), dim(2, 'y'), dim(3, 'x')];
      const e1 = cold('abc|', { a, b, c });
      expectObservable(bucketNode(s).apply(e1)).toBe('ABC|', {
        A: { port: 'out', event: a },
        B: { port: 'out', event: b },
        C: { port: 'out', event: c },
      });
    });
  });
});
