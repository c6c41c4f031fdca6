import { expect } from 'chai';
import { map, tap } from 'rxjs';
import { createLogger } from '../../src/core/logger';
import { CircuitBreaker } from '../../src/contraflow/circuit-breaker';
import { OnrampRuntime, onrampContext } from '../../src/ramps/onramp';
import type { Frame, OnrampSource } from '../../src/connectors/connector';
import { string } from '../../src/codecs/string';
import { testScheduler } from '../helpers';

const base = { url: '/onramp/push/one', uid: 1, hostname: 'test', logger: createLogger('silent'), requestExit: () => undefined };
const frame = (text: string): Frame => ({ stream: 0, data: Buffer.from(text), originUri: 'svc-test://here' });

/**
 * The machinery, not the onramp type, enforces the circuit breaker: it
 * calls the type's pause/resume on every change, and holds (never drops,
 * never passes early) frames a source still delivers while paused.
 */
describe('the onramp gate (shared machinery)', () => {
  const build = (source: (calls: string[]) => Omit<OnrampSource, 'frames'>, frames: OnrampSource['frames']) => {
    const breaker = new CircuitBreaker();
    const calls: string[] = [];
    const runtime = new OnrampRuntime({
      ctx: onrampContext(base, breaker),
      breaker,
      source: { frames, ...source(calls) },
      codec: string.create(),
      preprocessors: () => [],
    });
    return { breaker, calls, runtime };
  };

  it('pauses a push source on trigger, holds what still arrives, and releases it in order before resuming', () => {
    testScheduler().run(({ hot, cold, expectObservable, flush }) => {
      const input = hot('  a-b--c-d-------e|', { a: 'a', b: 'b', c: 'c', d: 'd', e: 'e' });
      const contraflow = ' ---t-----r';
      const expected = '   a-b------(cd)--e|';
      const { breaker, calls, runtime } = build(
        (log) => ({ pause: () => void log.push('pause'), resume: () => void log.push('resume') }),
        input.pipe(map(frame)),
      );
      cold(contraflow).subscribe((k) => (k === 't' ? breaker.trigger('/offramp/slow/one') : breaker.restore('/offramp/slow/one')));
      expectObservable(runtime.out$.pipe(map((e) => e.data))).toBe(expected, { a: 'a', b: 'b', c: 'c', d: 'd', e: 'e' });
      flush();
      expect(calls).to.deep.equal(['pause', 'resume']);
    });
  });

  it('holds the frames of a custom type that cannot pause, and loses none', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      const input = hot('  abcde-----f|');
      const { breaker, runtime } = build(() => ({}), input.pipe(map(frame)));
      cold('               -t--r').subscribe((k) => (k === 't' ? breaker.trigger('/offramp/x/one') : breaker.restore('/offramp/x/one')));
      expectObservable(runtime.out$.pipe(map((e) => e.data))).toBe('a---(bcde)f|');
    });
  });

  it('a released frame that triggers the breaker again keeps the rest held until it restores, then releases them in order', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      const input = hot('  a-bcde----------f|');
      const { breaker, runtime } = build(() => ({}), input.pipe(map(frame)));
      cold('               -t----r----R').subscribe((k) =>
        k === 't' ? breaker.trigger('/offramp/x/one') : breaker.restore(k === 'r' ? '/offramp/x/one' : '/offramp/y/one'),
      );
      // a downstream part that shuts the gate when it sees c, in the middle of the release of b..e
      let seen = false;
      const downstream = runtime.out$.pipe(
        map((e) => e.data),
        tap((data) => {
          if (data === 'c' && !seen) {
            seen = true;
            breaker.trigger('/offramp/y/one');
          }
        }),
      );
      expectObservable(downstream).toBe('a-----(bc)-(de)-f|');
    });
  });

  it('a source that ends while frames are held ends after they are released', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      const input = hot('  abc|');
      const { breaker, runtime } = build(() => ({}), input.pipe(map(frame)));
      cold('               -t----r').subscribe((k) => (k === 't' ? breaker.trigger('/offramp/x/one') : breaker.restore('/offramp/x/one')));
      expectObservable(runtime.out$.pipe(map((e) => e.data))).toBe('a-----(bc|)');
    });
  });

  it('stays closed until every part that triggered it restored, calling pause and resume once', () => {
    testScheduler().run(({ hot, cold, expectObservable, flush }) => {
      const input = hot('  a--b---c-------d|');
      const { breaker, calls, runtime } = build(
        (log) => ({ pause: () => void log.push('pause'), resume: () => void log.push('resume') }),
        input.pipe(map(frame)),
      );
      cold('               -xy--X---Y').subscribe((k) => (k === k.toLowerCase() ? breaker.trigger(k) : breaker.restore(k.toLowerCase())));
      expectObservable(runtime.out$.pipe(map((e) => e.data))).toBe('a--------(bc)--d|');
      flush();
      expect(calls).to.deep.equal(['pause', 'resume']);
    });
  });

  it('drives a pull source made with ctx.pullLoop: no step while the gate is closed', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker();
      const ctx = onrampContext(base, breaker, { scheduler });
      let n = 0;
      const frames = ctx.pullLoop<Frame>((subscriber) => {
        subscriber.next(frame(String(n++)));
        return n === 4 ? 'done' : 1;
      });
      const runtime = new OnrampRuntime({ ctx, breaker, source: { frames }, codec: string.create(), preprocessors: () => [] });
      cold('-t---r').subscribe((k) => (k === 't' ? breaker.trigger('/offramp/x/one') : breaker.restore('/offramp/x/one')));
      expectObservable(runtime.out$.pipe(map((e) => e.data))).toBe('a----bc(d|)', { a: '0', b: '1', c: '2', d: '3' });
    });
  });
});
