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

/** What a node emits for `events` in event time, which needs no timers: the events go in at once, then the input completes (the rest is flushed). */
function runEventTime(config: WindowAggregateConfig, events: readonly In[]): PortEvent[] {
  const outs: PortEvent[] = [];
  const input = new Subject<EddyEvent>();
  windowAggregateNode(config, testContext(testScheduler()))
    .apply(input)
    .subscribe((o) => outs.push(o));
  events.forEach((e, i) => input.next(ev(i + 1, e)));
  input.complete();
  return outs;
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
          const outs = runEventTime(config, events);
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

interface Session {
  k: string;
  start: number;
  end: number;
  n: number;
  s: number;
  hi: number;
  lo: number;
}

/**
 * The naive session model: a group's open events, recomputed into sessions
 * (the runs of events each less than `gap` after the run's last so far) for
 * every event. An event joins when its own `[t, t + gap)` overlaps a session
 * of its group (merging every session it bridges); otherwise it is late when
 * that interval ends at or before the watermark (the largest time so far less
 * the lateness). After each event, every session ending at or before the
 * watermark is emitted; the rest at the end.
 */
function naiveSessions(events: readonly In[], gap: number, lateness: number): { sessions: Session[]; late: number } {
  const open = new Map<string, In[]>();
  const emitted: Session[] = [];
  const runs = (es: readonly In[]): In[][] => {
    const sorted = [...es].sort((a, b) => a.t - b.t);
    const out: In[][] = [];
    for (const e of sorted) {
      const run = out[out.length - 1];
      if (run && e.t < Math.max(...run.map((x) => x.t)) + gap) run.push(e);
      else out.push([e]);
    }
    return out;
  };
  const session = (k: string, run: In[]): Session => ({
    k,
    start: Math.min(...run.map((e) => e.t)),
    end: Math.max(...run.map((e) => e.t)) + gap,
    n: run.length,
    s: run.reduce((a, e) => a + e.v, 0),
    hi: Math.max(...run.map((e) => e.v)),
    lo: Math.min(...run.map((e) => e.v)),
  });
  let maxT = -Infinity;
  let late = 0;
  for (const e of events) {
    const mine = open.get(e.k) ?? [];
    const joins = runs([...mine, e]).some((run) => run.includes(e) && run.length > 1);
    if (!joins && e.t + gap <= maxT - lateness) {
      late++;
      continue;
    }
    mine.push(e);
    open.set(e.k, mine);
    maxT = Math.max(maxT, e.t);
    for (const [k, es] of open) {
      const keep: In[] = [];
      for (const run of runs(es)) {
        if (session(k, run).end <= maxT - lateness) emitted.push(session(k, run));
        else keep.push(...run);
      }
      open.set(k, keep);
    }
  }
  for (const [k, es] of open) for (const run of runs(es)) emitted.push(session(k, run));
  return { sessions: emitted, late };
}

describe('window::aggregate session windows against a naive recomputation', () => {
  const byBounds = (a: Session, b: Session) => a.k.localeCompare(b.k) || a.start - b.start || a.end - b.end;

  it('gives every event-time session the events and aggregates the naive model finds, out-of-order events and bridged sessions included', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ t: fc.integer({ min: 0, max: 100 }), k: fc.constantFrom('a', 'b'), v: fc.integer({ min: -1000, max: 1000 }) }), {
          maxLength: 40,
        }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 40 }),
        (events, gap, lateness) => {
          const config: WindowAggregateConfig = {
            window: { gap },
            time: 'event.t',
            ...(lateness > 0 ? { allowed_lateness: lateness } : {}),
            group_by: { k: 'event.k' },
            aggregate: { n: 'count()', s: 'sum(event.v)', hi: 'max(event.v)', lo: 'min(event.v)' },
          };
          const outs = runEventTime(config, events);
          const expected = naiveSessions(events, gap, lateness);
          const got = outs
            .filter((o) => o.port === 'out')
            .map((o): Session => {
              const d = o.event.data as Omit<Session, 'start' | 'end'>;
              const w = o.event.meta.window as { start: number; end: number };
              return { k: d.k, start: w.start, end: w.end, n: d.n, s: d.s, hi: d.hi, lo: d.lo };
            });
          expect(got.sort(byBounds)).to.deep.equal(expected.sessions.sort(byBounds));
          expect(outs.filter((o) => o.port === 'late').length, 'late events').to.equal(expected.late);
        },
      ),
      { numRuns: 500 },
    );
  });
});
