import { expect } from 'chai';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import type { EddyEvent, PortEvent } from '../../src/core/event';
import { reduceNode, type ReduceConfig } from '../../src/pipeline/operators/reduce';
import { ev, testContext, testScheduler } from './helpers';

interface In {
  /** ms since the previous event (even, so that no event comes exactly a timeout (odd) after another) */
  dt: number;
  g: string;
  s: boolean;
  e: boolean;
}

/** One emission: when, on which port, and the input events (by index) it holds. */
interface Out {
  at: number;
  port: string;
  ids: number[];
}

/**
 * The naive model of generic::reduce: each group's open reduction is a list
 * of event indexes and the time of its last event; before each event (and
 * before the end), every reduction whose last event is more than `timeout`
 * old is emitted at last + timeout. An event for which starts_when holds
 * emits its group's open reduction first; a new group past max_groups goes to
 * overflow; ends_when or max_events emit the reduction with the event in it.
 */
function naive(events: readonly In[], end: number, timeout: number, maxEvents: number, maxGroups: number): Out[] {
  const open = new Map<string, { ids: number[]; last: number }>();
  const outs: Out[] = [];
  const expire = (now: number) => {
    for (const [g, r] of [...open]) {
      if (r.last + timeout < now) {
        outs.push({ at: r.last + timeout, port: 'out', ids: r.ids });
        open.delete(g);
      }
    }
  };
  let t = 0;
  events.forEach((e, i) => {
    t += e.dt;
    expire(t);
    let r = open.get(e.g);
    if (r && e.s) {
      outs.push({ at: t, port: 'out', ids: r.ids });
      open.delete(e.g);
      r = undefined;
    }
    if (!r) {
      if (open.size >= maxGroups) {
        outs.push({ at: t, port: 'overflow', ids: [i] });
        return;
      }
      r = { ids: [], last: t };
      open.set(e.g, r);
    }
    r.ids.push(i);
    r.last = t;
    if (e.e || r.ids.length >= maxEvents) {
      outs.push({ at: t, port: 'out', ids: r.ids });
      open.delete(e.g);
    }
  });
  expire(end);
  for (const r of open.values()) outs.push({ at: end, port: 'out', ids: r.ids });
  return outs;
}

const order = (a: Out, b: Out) => a.at - b.at || a.ids[0] - b.ids[0];

describe('generic::reduce against a naive recomputation', () => {
  it('emits the reductions the naive model finds, at the same virtual times, for random streams of groups, starts, ends and pauses', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            dt: fc.constantFrom(0, 2, 4, 8, 20),
            g: fc.constantFrom('a', 'b', 'c'),
            s: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
            e: fc.integer({ min: 0, max: 19 }).map((n) => n < 3),
          }),
          { maxLength: 40 },
        ),
        fc.constantFrom(5, 9, 13),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 3 }),
        (events, timeout, maxEvents, maxGroups) => {
          const config: ReduceConfig = {
            group_by: { g: 'event.g' },
            starts_when: 'event.s',
            ends_when: 'event.e',
            timeout,
            max_events: maxEvents,
            max_groups: maxGroups,
            merge: { i: 'array' },
          };
          const end = events.reduce((t, e) => t + e.dt, 0) + 30;
          const s = testScheduler();
          const got: Out[] = [];
          s.run(() => {
            const input = new Subject<EddyEvent>();
            reduceNode(config, testContext(s))
              .apply(input)
              .subscribe((o: PortEvent) => {
                const data = o.event.data as { i: number | number[] };
                got.push({ at: s.now(), port: o.port, ids: Array.isArray(data.i) ? data.i : [data.i] });
              });
            let t = 0;
            events.forEach((e, i) => {
              t += e.dt;
              s.schedule(() => input.next(ev(i + 1, { ...e, i })), t);
            });
            s.schedule(() => input.complete(), end);
          });
          expect(got.sort(order)).to.deep.equal(naive(events, end, timeout, maxEvents, maxGroups).sort(order));
        },
      ),
      { numRuns: 400 },
    );
  });
});
