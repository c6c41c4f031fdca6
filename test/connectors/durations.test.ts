import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY, VirtualTimeScheduler, type Observable, type Subscriber } from 'rxjs';
import { createLogger } from '../../src/core/logger';
import type { Frame, OfframpContext, OnrampContext } from '../../src/connectors/connector';
import { blackhole } from '../../src/connectors/blackhole/offramp';
import { blaster } from '../../src/connectors/blaster/onramp';
import { metronome } from '../../src/connectors/metronome/onramp';
import type { PullStep } from '../../src/connectors/_shared/pull-loop';

/**
 * The time settings whose bare number is not milliseconds (blackhole's
 * `*_secs`, blaster's `interval` in ns), and one in ms: the old numeric
 * spelling and a duration string mean the same. No wall clock: the timers
 * a type asks for are recorded, or run on a virtual scheduler, or the clock
 * it reads is set by the test.
 */
describe('durations: the numeric spelling and the string mean the same', () => {
  describe('blackhole warmup_secs and stop_after_secs (a bare number is seconds)', () => {
    /** The delays of the timers a measuring blackhole sets up, recorded instead of run. */
    async function timersOf(config: Record<string, unknown>): Promise<number[]> {
      const delays: number[] = [];
      const real = globalThis.setTimeout;
      globalThis.setTimeout = ((_fn: () => void, ms: number) => (delays.push(ms), { unref: () => undefined })) as unknown as typeof setTimeout;
      try {
        const ctx = { url: '/offramp/sink/test', logger: createLogger('silent'), requestExit: () => undefined } as unknown as OfframpContext;
        const sink = await blackhole.create({ significant_figures: 2, ...config }, ctx);
        await sink.close?.();
      } finally {
        globalThis.setTimeout = real;
      }
      return delays;
    }

    it('5 and "5s", 2 and "2000ms": the warm-up ends at 2 s, the report at 7 s', async () => {
      const numeric = await timersOf({ warmup_secs: 2, stop_after_secs: 5 });
      expect(numeric).to.deep.equal([2000, 7000]);
      expect(await timersOf({ warmup_secs: '2000ms', stop_after_secs: '5s' })).to.deep.equal(numeric);
      expect(await timersOf({ warmup_secs: '2s', stop_after_secs: 5 })).to.deep.equal(numeric);
    });

    it('0 and "0s": no warm-up timer, and never stops', async () => {
      expect(await timersOf({ warmup_secs: 0, stop_after_secs: 0 })).to.deep.equal([]);
      expect(await timersOf({ warmup_secs: '0s', stop_after_secs: '0ms' })).to.deep.equal([]);
    });

    it('stopsProcess: stop_after_secs 5 and "5s" may stop the process, 0 and "0s" may not', () => {
      const stops = (stop: number | string) => blackhole.stopsProcess?.({ warmup_secs: 0, stop_after_secs: stop, significant_figures: 2 }) !== undefined;
      expect([5, '5s', '500ms', 0, '0s'].map(stops)).to.deep.equal([true, true, true, false, false]);
    });
  });

  describe('blaster interval (a bare number is nanoseconds)', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'eddy-durations-'));
      writeFileSync(join(dir, 'in.json'), '{"a":1}\n{"a":2}\n');
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    /** What the blaster's pull step does at each of these clock readings (ms): how many events it sends, and what it returns. */
    async function paceOf(interval: number | string, clock: number[]): Promise<[number, number | string][]> {
      let step: PullStep<Frame> | undefined;
      const ctx = {
        hostname: 'test',
        gate: { isOpen: true },
        pullLoop: (s: PullStep<Frame>) => ((step = s), EMPTY),
      } as unknown as OnrampContext;
      const onramp = (await blaster.create({ source: join(dir, 'in.json'), interval, base64: false }, ctx)) as { frames: Observable<Frame> };
      onramp.frames.subscribe().unsubscribe();
      const realNow = performance.now.bind(performance);
      const out: [number, number | string][] = [];
      try {
        for (const t of clock) {
          performance.now = () => t;
          let sent = 0;
          const result = step!({ next: () => sent++ } as unknown as Subscriber<Frame>);
          out.push([sent, result]);
        }
      } finally {
        performance.now = realNow;
      }
      return out;
    }

    it('1000000000 and "1s": one event, then a wait of 1000 ms, then the next', async () => {
      const clock = [0, 0, 999, 1000, 1000, 2500];
      const numeric = await paceOf(1_000_000_000, clock);
      expect(numeric).to.deep.equal([
        [1, 0],
        [0, 1000],
        [0, 1000],
        [1, 0],
        [0, 1000],
        [1, 0],
      ]);
      expect(await paceOf('1s', clock)).to.deep.equal(numeric);
      expect(await paceOf('1000ms', clock)).to.deep.equal(numeric);
    });
  });

  describe('metronome interval (a bare number is milliseconds)', () => {
    /** The ticks in `frames` ms of virtual time. */
    async function ticksIn(interval: number | string, frames: number): Promise<number> {
      const scheduler = new VirtualTimeScheduler(undefined, frames);
      const ctx = { hostname: 'test', scheduler } as unknown as OnrampContext;
      const onramp = (await metronome.create({ interval }, ctx)) as { frames: Observable<Frame> };
      let ticks = 0;
      const subscription = onramp.frames.subscribe(() => ticks++);
      scheduler.flush();
      subscription.unsubscribe();
      return ticks;
    }

    it('1000, "1s" and "1000ms": 3 ticks in 3.5 s of virtual time', async () => {
      for (const interval of [1000, '1s', '1000ms']) expect(await ticksIn(interval, 3500), String(interval)).to.equal(3);
      expect(await ticksIn('0.5s', 3500)).to.equal(7);
    });
  });
});
