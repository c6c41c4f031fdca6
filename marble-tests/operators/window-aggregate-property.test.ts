import { expect } from 'chai';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import type { EddyEvent } from '../../src/core/event';
import type { PortEvent } from '../../src/core/event';
import { windowAggregateNode, type WindowAggregateConfig } from '../../src/pipeline/operators/window-aggregate';
import { ev, testContext, testScheduler } from './helpers';

interface In {
  t: number;
  k: string;
  v: number;
}

/** The naive model: each event joins the windows of its time whose end the watermark before it has not reached; every window with events is emitted. */
function naive(events: readonly In[], size: number, hop: number, lateness: number) {
  const out = new Map<string, { n: number; s: number; hi: number; lo: number; first: number; all: number[] }>();
  let maxT = -Infinity;
  let late = 0;
  for (const e of events) {
    const watermark = maxT - lateness;
    let joined = false;
    for (let start = Math.floor(e.t / hop) * hop; start > e.t - size; start -= hop) {
      if (start + size <= watermark) continue;
      joined = true;
      const key = `${start}|${e.k}`;
      const agg = out.get(key) ?? { n: 0, s: 0, hi: -Infinity, lo: Infinity, first: e.v, all: [] };
      agg.n++;
      agg.s += e.v;
      agg.hi = Math.max(agg.hi, e.v);
      agg.lo = Math.min(agg.lo, e.v);
      agg.all.push(e.v);
      out.set(key, agg);
    }
    if (!joined) late++;
    maxT = Math.max(maxT, e.t);
  }
  return { windows: out, late };
}

describe('window::aggregate against a naive recomputation', () => {
  it('gives every window and group the aggregates the naive model computes, for random event-time streams', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ t: fc.integer({ min: 0, max: 200 }), k: fc.constantFrom('a', 'b', 'c'), v: fc.integer({ min: -1000, max: 1000 }) }), {
          maxLength: 60,
        }),
        fc.constantFrom([10, 10], [10, 5], [20, 5], [7, 7], [9, 3]),
        fc.integer({ min: 0, max: 30 }),
        (events, [size, hop], lateness) => {
          const config: WindowAggregateConfig = {
            window: hop === size ? { size } : { size, hop },
            time: 'event.t',
            ...(lateness > 0 ? { allowed_lateness: lateness } : {}),
            group_by: { k: 'event.k' },
            aggregate: { n: 'count()', s: 'sum(event.v)', hi: 'max(event.v)', lo: 'min(event.v)', first: 'first(event.v)', all: 'collect(event.v, 1000)' },
          };
          // event time needs no timers: the events go in at once, then the input completes (the rest is flushed)
          const outs: PortEvent[] = [];
          const input = new Subject<EddyEvent>();
          windowAggregateNode(config, testContext(testScheduler()))
            .apply(input)
            .subscribe((o) => outs.push(o));
          events.forEach((e, i) => input.next(ev(i + 1, e)));
          input.complete();
          const { windows: expected, late } = naive(events, size, hop, lateness);
          const got = new Map(
            outs
              .filter((o) => o.port === 'out')
              .map((o) => {
                const d = o.event.data as { k: string; n: number; s: number; hi: number; lo: number; first: number; all: number[] };
                return [`${(o.event.meta.window as { start: number }).start}|${d.k}`, { n: d.n, s: d.s, hi: d.hi, lo: d.lo, first: d.first, all: d.all }];
              }),
          );
          expect(got).to.deep.equal(expected);
          expect(outs.filter((o) => o.port === 'late').length, 'late events').to.equal(late);
        },
      ),
      { numRuns: 300 },
    );
  });
});
