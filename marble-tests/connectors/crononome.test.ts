import { expect } from 'chai';
import { map, type SchedulerLike } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { createLogger } from '../../src/core/logger';
import { CircuitBreaker } from '../../src/contraflow/circuit-breaker';
import { OnrampRuntime, onrampContext } from '../../src/ramps/onramp';
import { crononome } from '../../src/connectors/crononome/onramp';
import type { Frame, OnrampSource } from '../../src/connectors/connector';
import { json } from '../../src/codecs/json';
import { testScheduler } from '../helpers';

const logger = createLogger('silent');

/** 2030-01-01T00:00:00Z: a whole minute, so every-n-seconds entries line up with the virtual frames. */
const BASE = Date.UTC(2030, 0, 1);

interface Clock {
  scheduler: SchedulerLike;
  /** moves the onramp's clock ahead without running anything: what a blocked event loop looks like to it */
  jump(ms: number): void;
  /** every delay the onramp asked for */
  delays: number[];
}

/** The test scheduler with its virtual frame 0 at `base`, as the onramp's clock. */
function clockAt(ts: TestScheduler, base: number): Clock {
  let offset = base;
  const delays: number[] = [];
  return {
    scheduler: {
      now: () => offset + ts.now(),
      schedule: (work, delay, state) => {
        delays.push(delay ?? 0);
        return ts.schedule(work as Parameters<TestScheduler['schedule']>[0], delay, state);
      },
    },
    jump: (ms) => void (offset += ms),
    delays,
  };
}

function create(entries: unknown[], scheduler: SchedulerLike, breaker = new CircuitBreaker()): OnrampSource {
  const ctx = onrampContext({ url: '/onramp/cron/test', uid: 1, hostname: 'host', logger, requestExit: () => undefined }, breaker, { scheduler });
  return crononome.create({ entries } as Parameters<typeof crononome.create>[0], ctx) as OnrampSource;
}

/** A frame as `name:id`, the compact form for marbles. */
const tick = (f: Frame) => {
  const v = f.value as { id: number; trigger: { name: string } };
  return `${v.trigger.name}:${v.id}`;
};

describe('crononome in virtual time', () => {
  let ts: TestScheduler;
  beforeEach(() => (ts = testScheduler()));

  it('fires each entry at its times (UTC, seconds), never at the start time itself', () => {
    ts.run(({ expectObservable }) => {
      const clock = clockAt(ts, BASE);
      const source = create(
        [
          { name: 'two', expr: '*/2 * * * * *', payload: { hello: 'world' } },
          { name: 'three', expr: '*/3 * * * * *' },
        ],
        clock.scheduler,
      );
      // at 6 s both are due: 'three' was planned first (at 3 s), so it runs first
      expectObservable(source.frames.pipe(map(tick)), '^ 6500ms !').toBe('2000ms a 999ms b 999ms c 1999ms (de)', {
        a: 'two:0',
        b: 'three:1',
        c: 'two:2',
        d: 'three:3',
        e: 'two:4',
      });
    });
  });

  it('sets the event shape: onramp, ingest_ns, id, trigger with name and payload (only when given), origin', () => {
    ts.run(({ expectObservable }) => {
      const clock = clockAt(ts, BASE);
      const source = create(
        [
          { name: 'two', expr: '*/2 * * * * *', payload: { hello: 'world' } },
          { name: 'plain', expr: '1 * * * * *' },
        ],
        clock.scheduler,
      );
      const ns = (ms: number) => BigInt(BASE + ms) * 1_000_000n;
      const frame = (ms: number, id: number, trigger: unknown): Frame => ({
        stream: 0,
        value: { onramp: 'crononome', ingest_ns: ns(ms), id, trigger },
        originUri: 'svc-crononome://host',
        ingestNs: ns(ms),
      });
      expectObservable(source.frames, '^ 2500ms !').toBe('1000ms a 999ms b', {
        a: frame(1000, 0, { name: 'plain' }),
        b: frame(2000, 1, { name: 'two', payload: { hello: 'world' } }),
      });
    });
  });

  it('fires nothing while the breaker is triggered and skips the times that passed meanwhile', () => {
    ts.run(({ cold, expectObservable }) => {
      const clock = clockAt(ts, BASE);
      const breaker = new CircuitBreaker();
      const source = create([{ name: 'sec', expr: '* * * * * *' }], clock.scheduler, breaker);
      const runtime = new OnrampRuntime({
        ctx: { url: '/onramp/cron/test', uid: 1, hostname: 'host', logger, requestExit: () => undefined },
        breaker,
        source,
        codec: json.create(),
        preprocessors: () => [],
      });
      cold('2500ms t 3999ms r').subscribe((x) => (x === 't' ? breaker.trigger('/offramp/slow/x') : breaker.restore('/offramp/slow/x')));
      // trigger at 2.5 s, restore at 6.5 s: the ticks of 3, 4, 5 and 6 s are gone, not delivered late
      expectObservable(runtime.out$.pipe(map((e) => (e.data as { id: number }).id)), '^ 8500ms !').toBe('1000ms a 999ms b 4999ms c 999ms d', {
        a: 0,
        b: 1,
        c: 2,
        d: 3,
      });
    });
  });

  it('pause and resume on the source itself: no timers while paused, the next time from the resume on', () => {
    // how many timers were planned just after the pause and just before the resume
    const planned: number[] = [];
    ts.run(({ cold, expectObservable }) => {
      const clock = clockAt(ts, BASE);
      const source = create([{ name: 'sec', expr: '* * * * * *' }], clock.scheduler);
      cold('1500ms p 1999ms r').subscribe((x) => (x === 'p' ? source.pause!() : source.resume!()));
      cold('1600ms x 1799ms y').subscribe(() => planned.push(clock.delays.length));
      expectObservable(source.frames.pipe(map(tick)), '^ 5500ms !').toBe('1000ms a 2999ms b 999ms c', { a: 'sec:0', b: 'sec:1', c: 'sec:2' });
    });
    expect(planned).to.have.length(2);
    expect(planned[1], 'no timer ran or was planned while paused').to.equal(planned[0]);
  });

  it('skips a tick whose timer runs more than its second late (a blocked event loop) instead of firing it late', () => {
    ts.run(({ cold, expectObservable }) => {
      const clock = clockAt(ts, BASE);
      const source = create([{ name: 'sec', expr: '* * * * * *' }], clock.scheduler);
      // at 2.5 s the clock leaps 3 s: the timer for 3 s runs when it is already 6 s, so 3 s is skipped and 7 s is next
      cold('2500ms j').subscribe(() => clock.jump(3000));
      expectObservable(
        source.frames.pipe(map((f) => `${tick(f)}@${(f.value as { ingest_ns: bigint }).ingest_ns / 1_000_000n - BigInt(BASE)}`)),
        '^ 5500ms !',
      ).toBe('1000ms a 999ms b 1999ms c 999ms d', { a: 'sec:0@1000', b: 'sec:1@2000', c: 'sec:2@7000', d: 'sec:3@8000' });
    });
  });

  it('reaches times beyond 2038 and a year away in timer steps a Node timer can take', () => {
    const start = Date.UTC(2037, 11, 31, 23, 59, 58);
    const clock = clockAt(ts, start);
    ts.run(({ expectObservable }) => {
      const source = create([{ name: 'new-year', expr: '0 0 0 1 1 *' }], clock.scheduler);
      const year2039 = Date.UTC(2039, 0, 1) - start;
      expectObservable(source.frames.pipe(map(tick)), `^ ${year2039 + 1000}ms !`).toBe(`2000ms a ${year2039 - 2001}ms b`, { a: 'new-year:0', b: 'new-year:1' });
    });
    // a year is about 15 maximal timer steps; none longer than a 32-bit timer delay
    expect(clock.delays.length).to.be.greaterThan(10);
    expect(Math.max(...clock.delays)).to.equal(2 ** 31 - 1);
  });

  it('refuses an illegal expression with an error naming the entry, before anything runs', () => {
    const clock = clockAt(ts, BASE);
    expect(() =>
      create(
        [
          { name: 'ok', expr: '* * * * * *' },
          { name: 'bad', expr: '61 * * * * *' },
        ],
        clock.scheduler,
      ),
    ).to.throw(/^entries\[1\] \(bad\): illegal expression '61 \* \* \* \* \*': .*61/);
    expect(() => create([{ name: 'five', expr: '* * * * *' }], clock.scheduler)).to.throw(
      /entries\[0\] \(five\): illegal expression '\* \* \* \* \*': expected six fields .* got 5/,
    );
    expect(() => create([{ name: 'feb', expr: '0 0 0 30 2 *' }], clock.scheduler)).to.throw(/entries\[0\] \(feb\): illegal expression/);
    expect(clock.delays).to.deep.equal([]);
  });
});
