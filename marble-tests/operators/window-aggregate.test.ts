import { expect } from 'chai';
import { map } from 'rxjs';
import type { EddyEvent, Insight, PortEvent } from '../../src/core/event';
import { compilePlan, windowAggregate, windowAggregateNode, type WindowAggregateConfig } from '../../src/pipeline/operators/window-aggregate';
import { PIPELINE, UID, ev, testContext, testScheduler } from './helpers';

/** What a test compares of an emission: the port, the data and the meta (window bounds, partial, error). */
const seen = ({ port, event }: PortEvent) => ({ port, data: event.data, meta: event.meta });

/** Runs the node over a cold marble of events and compares what it emits, in virtual time. */
function expectWindows(
  config: WindowAggregateConfig,
  input: string,
  values: Record<string, EddyEvent>,
  expected: string,
  outputs: Record<string, unknown>,
): void {
  const s = testScheduler();
  s.run(({ cold, expectObservable }) => {
    const node = windowAggregateNode(config, testContext(s, 'w'));
    expectObservable(node.apply(cold(input, values)).pipe(map(seen))).toBe(expected, outputs);
  });
}

const out = (data: unknown, start: number, end: number, extra: Record<string, unknown> = {}) => ({
  port: 'out',
  data,
  meta: { window: { start, end }, ...extra },
});

describe('window::aggregate', () => {
  const e = (seq: number, data: Record<string, unknown>) => ev(seq, data);

  describe('tumbling, processing time', () => {
    const config: WindowAggregateConfig = { window: { size: 10 }, group_by: { app: 'event.app' }, aggregate: { n: 'count()', bytes: 'sum(event.size)' } };
    const values = { a: e(1, { app: 'x', size: 5 }), b: e(2, { app: 'y', size: 1 }), c: e(3, { app: 'x', size: 7 }), d: e(4, { app: 'x', size: 2 }) };

    it('emits one event per group when the window closes on the scheduler, groups in arrival order', () => {
      // a, b and c in [0, 10); d at 12 in [10, 20), which closes at 20
      expectWindows(config, 'a-b-c-------d----------|', values, '----------(XY)------Z--|', {
        X: out({ app: 'x', n: 2, bytes: 12 }, 0, 10),
        Y: out({ app: 'y', n: 1, bytes: 1 }, 0, 10),
        Z: out({ app: 'x', n: 1, bytes: 2 }, 10, 20),
      });
    });

    it("puts an event exactly at a window's end into the next window", () => {
      expectWindows(config, '----------a-----------|', values, '--------------------X-|', { X: out({ app: 'x', n: 1, bytes: 5 }, 10, 20) });
    });

    it('emits the open windows marked partial when the input completes', () => {
      expectWindows(config, 'a-b|', values, '---(XY|)', {
        X: out({ app: 'x', n: 1, bytes: 5 }, 0, 10, { partial: true }),
        Y: out({ app: 'y', n: 1, bytes: 1 }, 0, 10, { partial: true }),
      });
    });

    it('emits nothing for a window without events (an idle stream closes nothing)', () => {
      expectWindows(config, '-------------------------|', values, '-------------------------|', {});
    });
  });

  describe('sliding (hopping), processing time', () => {
    it('counts an event in every window that holds it', () => {
      const config: WindowAggregateConfig = { window: { size: 10, hop: 5 }, aggregate: { n: 'count()' } };
      // a at 1 is in [-5, 5) and [0, 10); b at 7 in [0, 10) and [5, 15)
      expectWindows(config, '-a-----b--------|', { a: e(1, {}), b: e(2, {}) }, '-----X----Y----Z|', {
        X: out({ n: 1 }, -5, 5),
        Y: out({ n: 2 }, 0, 10),
        Z: out({ n: 1 }, 5, 15),
      });
    });

    it('sends an event of a new group to `overflow` when any window holding it has max_groups groups', () => {
      const config: WindowAggregateConfig = { window: { size: 10, hop: 5 }, group_by: { k: 'event.k' }, aggregate: { n: 'count()' }, max_groups: 1 };
      // a at 1 opens [-5, 5) and [0, 10) with group a; b at 2 would be a second group in both
      const values = { a: e(1, { k: 'a' }), b: e(2, { k: 'b' }), c: e(3, { k: 'a' }) };
      expectWindows(config, '-abc-------|', values, '--O--X----Y|', {
        O: { port: 'overflow', data: { k: 'b' }, meta: {} },
        X: out({ k: 'a', n: 2 }, -5, 5),
        Y: out({ k: 'a', n: 2 }, 0, 10),
      });
    });
  });

  describe('session, processing time', () => {
    it("closes a group's session after `gap` without its events; other groups keep their own sessions", () => {
      const config: WindowAggregateConfig = { window: { gap: 5 }, group_by: { user: 'event.user' }, aggregate: { n: 'count()' } };
      const values = { a: e(1, { user: 'ann' }), b: e(2, { user: 'bob' }), c: e(3, { user: 'ann' }) };
      // ann: 0 and 4 (one session, ends 4+5=9); bob: 2 (ends 7); ann again at 15: a new session, flushed at the end
      expectWindows(config, 'a-b-c----------a---|', values, '-------B-A---------(C|)', {
        B: out({ user: 'bob', n: 1 }, 2, 7),
        A: out({ user: 'ann', n: 2 }, 0, 9),
        C: out({ user: 'ann', n: 1 }, 15, 20, { partial: true }),
      });
    });

    it("closes a session at its end, exclusive: the group's event exactly `gap` after its last opens a new session", () => {
      const config: WindowAggregateConfig = { window: { gap: 5 }, group_by: { user: 'event.user' }, aggregate: { n: 'count()' } };
      const values = { a: e(1, { user: 'ann' }), b: e(2, { user: 'ann' }) };
      expectWindows(config, 'a----b------|', values, '-----A----B-|', {
        A: out({ user: 'ann', n: 1 }, 0, 5),
        B: out({ user: 'ann', n: 1 }, 5, 10),
      });
    });
  });

  describe('count', () => {
    it("closes a group's window at `count` events", () => {
      const config: WindowAggregateConfig = { window: { count: 2 }, group_by: { k: 'event.k' }, aggregate: { n: 'count()', all: 'collect(event.v)' } };
      const values = { a: e(1, { k: 1, v: 'a' }), b: e(2, { k: 2, v: 'b' }), c: e(3, { k: 1, v: 'c' }), d: e(4, { k: 2, v: 'd' }), f: e(5, { k: 1, v: 'f' }) };
      expectWindows(config, 'abcdf|', values, '--XY-(Z|)', {
        X: out({ k: 1, n: 2, all: ['a', 'c'] }, 0, 2),
        Y: out({ k: 2, n: 2, all: ['b', 'd'] }, 1, 3),
        Z: out({ k: 1, n: 1, all: ['f'] }, 4, 4, { partial: true }),
      });
    });

    it("collects whole events with collect(event) (Tremor's group-by-count), the same values as through CEL", () => {
      // `event` alone is read as it is; `true ? event : null` goes through CEL: both must give each event's data
      const config: WindowAggregateConfig = {
        window: { count: 2 },
        group_by: { t: 'event.t' },
        aggregate: { count: 'count()', first: 'collect(event)', cel: 'collect(true ? event : null)' },
      };
      const a = { t: 'syslog', n: 1, tags: ['x'], nested: { ok: true } };
      const b = { t: 'syslog', n: 2.5, tags: [], nested: { ok: false } };
      expectWindows(config, 'ab|', { a: e(1, a), b: e(2, b) }, '-X|', { X: out({ t: 'syslog', count: 2, first: [a, b], cel: [a, b] }, 0, 1) });
    });

    it('keeps groups apart whose keys differ only in type or look like a JSON key (1, "1", "[1]", "\\u0001[1]")', () => {
      const config: WindowAggregateConfig = { window: { count: 2 }, group_by: { k: 'event.k' }, aggregate: { n: 'count()' } };
      const values = {
        a: e(1, { k: 1 }),
        b: e(2, { k: '1' }),
        c: e(3, { k: '[1]' }),
        h: e(4, { k: '\u0001[1]' }),
        d: e(5, { k: 1 }),
        f: e(6, { k: '1' }),
        g: e(7, { k: '[1]' }),
        i: e(8, { k: '\u0001[1]' }),
      };
      expectWindows(config, 'abchdfgi|', values, '----XYZW|', {
        X: out({ k: 1, n: 2 }, 0, 4),
        Y: out({ k: '1', n: 2 }, 1, 5),
        Z: out({ k: '[1]', n: 2 }, 2, 6),
        W: out({ k: '\u0001[1]', n: 2 }, 3, 7),
      });
    });

    it('gives calls that name the same argument the same values, and each its own copy of a list or map', () => {
      // event.v is evaluated once per event for all four calls; event.o once per call (a copy each)
      const config: WindowAggregateConfig = {
        window: { count: 2 },
        aggregate: {
          s: 'sum(event.v)',
          lo: 'min(event.v)',
          hi: 'max(event.v)',
          m: 'mean(event.v)',
          a: 'collect(event.o)',
          b: 'collect(event.o)',
          n: 'count()',
        },
      };
      const values = { a: e(1, { v: 2, o: { x: 1 } }), b: e(2, { v: 6, o: { x: 2 } }) };
      expectWindows(config, 'ab|', values, '-X|', { X: out({ s: 8, lo: 2, hi: 6, m: 4, a: [{ x: 1 }, { x: 2 }], b: [{ x: 1 }, { x: 2 }], n: 2 }, 0, 1) });
      const s = testScheduler();
      const outs: PortEvent[] = [];
      s.run(({ cold }) => {
        windowAggregateNode(config, testContext(s, 'w'))
          .apply(cold('ab|', values))
          .subscribe((o) => outs.push(o));
      });
      const data = outs[0].event.data as { a: unknown[]; b: unknown[] };
      expect(data.a[0], 'collect(event.o) twice: two copies, so changing one output field cannot change the other').to.not.equal(data.b[0]);
    });
  });

  describe('event time', () => {
    const config: WindowAggregateConfig = { window: { size: 10 }, time: 'event.ts', allowed_lateness: 5, aggregate: { n: 'count()', ts: 'collect(event.ts)' } };
    const at = (seq: number, ts: number) => e(seq, { ts });

    it('closes a window when the watermark (largest time less allowed_lateness) passes its end; a late event goes to `late`', () => {
      // 3, 8 in [0,10); 12 (watermark 7); 9 still joins [0,10); 16 (watermark 11) closes it; 2 is then late
      const values = { a: at(1, 3), b: at(2, 8), c: at(3, 12), d: at(4, 9), f: at(5, 16), g: at(6, 2) };
      expectWindows(config, 'abcdfg|', values, '----XL(Y|)', {
        X: out({ n: 3, ts: [3, 8, 9] }, 0, 10),
        L: { port: 'late', data: { ts: 2 }, meta: {} },
        Y: out({ n: 2, ts: [12, 16] }, 10, 20, { partial: true }),
      });
    });

    it('takes an event exactly at the end into the next window, and closes at a watermark equal to the end', () => {
      const strict: WindowAggregateConfig = { ...config, allowed_lateness: undefined };
      delete strict.allowed_lateness;
      const values = { a: at(1, 0), b: at(2, 10), c: at(3, 9) };
      expectWindows(strict, 'abc|', values, '-XL(Y|)', {
        X: out({ n: 1, ts: [0] }, 0, 10),
        L: { port: 'late', data: { ts: 9 }, meta: {} },
        Y: out({ n: 1, ts: [10] }, 10, 20, { partial: true }),
      });
    });

    it('reads RFC 3339 timestamps from CEL', () => {
      const ts: WindowAggregateConfig = { window: { size: 1000 }, time: 'timestamp(event.at)', aggregate: { n: 'count()' } };
      const values = { a: e(1, { at: '2026-01-01T00:00:00.500Z' }), b: e(2, { at: '2026-01-01T00:00:01.000Z' }) };
      const start = Date.parse('2026-01-01T00:00:00Z');
      expectWindows(ts, 'ab|', values, '-X(Y|)', { X: out({ n: 1 }, start, start + 1000), Y: out({ n: 1 }, start + 1000, start + 2000, { partial: true }) });
    });

    it('merges nothing across session gaps: event-time sessions close on the watermark', () => {
      const sessions: WindowAggregateConfig = { window: { gap: 5 }, time: 'event.ts', aggregate: { n: 'count()' } };
      const values = { a: at(1, 0), b: at(2, 3), c: at(3, 20), d: at(4, 1) };
      expectWindows(sessions, 'abcd|', values, '--XL(Y|)', {
        X: out({ n: 2 }, 0, 8),
        L: { port: 'late', data: { ts: 1 }, meta: {} },
        Y: out({ n: 1 }, 20, 25, { partial: true }),
      });
    });
  });

  describe('event-time sessions at their edges', () => {
    const sessions: WindowAggregateConfig = { window: { gap: 5 }, time: 'event.ts', group_by: { user: 'event.user' }, aggregate: { n: 'count()' } };
    const at = (seq: number, user: string, ts: number) => e(seq, { user, ts });

    it("takes a session's end as exclusive: an event at exactly the end opens a new session, and the watermark reaching the end closes it", () => {
      const values = { a: at(1, 'ann', 0), b: at(2, 'ann', 5) };
      expectWindows(sessions, 'ab|', values, '-A(B|)', {
        A: out({ user: 'ann', n: 1 }, 0, 5),
        B: out({ user: 'ann', n: 1 }, 5, 10, { partial: true }),
      });
    });

    it('takes a session of one event as exclusive at its start too: an event exactly `gap` before a session is not in it, whatever the order', () => {
      // ann at 10 (session [10, 15)), then at 5 ([5, 10), which only touches it): two sessions, as when 5 comes first
      const late: WindowAggregateConfig = { ...sessions, allowed_lateness: 100 };
      const values = { a: at(1, 'ann', 10), b: at(2, 'ann', 5) };
      expectWindows(late, 'ab|', values, '--(AB|)', {
        A: out({ user: 'ann', n: 1 }, 5, 10, { partial: true }),
        B: out({ user: 'ann', n: 1 }, 10, 15, { partial: true }),
      });
    });

    it('merges the sessions an out-of-order event bridges into one', () => {
      // ann at 0 ([0, 5)) and at 8 ([8, 13)): two sessions until ann at 4 fills the gap between them
      const late: WindowAggregateConfig = { ...sessions, allowed_lateness: 100, aggregate: { n: 'count()', ts: 'collect(event.ts)', f: 'first(event.ts)' } };
      const values = { a: at(1, 'ann', 0), b: at(2, 'ann', 8), c: at(3, 'ann', 4) };
      expectWindows(late, 'abc|', values, '---(A|)', { A: out({ user: 'ann', n: 3, ts: [0, 8, 4], f: 0 }, 0, 13, { partial: true }) });
    });

    it('sends an event to `late` when its new session would end at or before the watermark', () => {
      // ann at 20 sets the watermark to 20; bob at 15 would open [15, 20), closed already; bob at 16 opens [16, 21)
      const values = { a: at(1, 'ann', 20), b: at(2, 'bob', 15), c: at(3, 'bob', 16) };
      expectWindows(sessions, 'abc|', values, '-L-(BA|)', {
        L: { port: 'late', data: { user: 'bob', ts: 15 }, meta: {} },
        A: out({ user: 'ann', n: 1 }, 20, 25, { partial: true }),
        B: out({ user: 'bob', n: 1 }, 16, 21, { partial: true }),
      });
    });
  });

  it('says in meta `aggregate` what a function reports about its result (collect past its limit)', () => {
    const config: WindowAggregateConfig = { window: { count: 3 }, aggregate: { some: 'collect(event.k, 2)' } };
    expectWindows(config, 'abc|', { a: e(1, { k: 1 }), b: e(2, { k: 2 }), c: e(3, { k: 3 }) }, '--X|', {
      X: out({ some: [1, 2] }, 0, 2, { aggregate: { some: { dropped: 1 } } }),
    });
  });

  describe('where, having, max_groups, errors', () => {
    it('aggregates only what `where` keeps and emits only the groups `having` keeps', () => {
      const config: WindowAggregateConfig = {
        window: { count: 3 },
        where: 'event.level == "error"',
        group_by: { app: 'event.app' },
        aggregate: { n: 'count()' },
        having: 'n > 1',
      };
      const values = {
        a: e(1, { level: 'error', app: 'x' }),
        b: e(2, { level: 'info', app: 'x' }),
        c: e(3, { level: 'error', app: 'y' }),
        d: e(4, { level: 'error', app: 'x' }),
      };
      expectWindows(config, 'abcd|', values, '----(X|)', { X: out({ app: 'x', n: 2 }, 0, 3, { partial: true }) });
    });

    it('sends an event of a new group past max_groups to `overflow`, and keeps aggregating the known groups', () => {
      const config: WindowAggregateConfig = { window: { size: 10 }, group_by: { k: 'event.k' }, aggregate: { n: 'count()' }, max_groups: 2 };
      const values = { a: e(1, { k: 'a' }), b: e(2, { k: 'b' }), c: e(3, { k: 'c' }), d: e(4, { k: 'a' }) };
      expectWindows(config, 'abcd--------------|', values, '--O-------(XY)----|', {
        O: { port: 'overflow', data: { k: 'c' }, meta: {} },
        X: out({ k: 'a', n: 2 }, 0, 10),
        Y: out({ k: 'b', n: 1 }, 0, 10),
      });
    });

    it('bounds the open count and session windows by max_groups: a new group past it overflows, a known one goes on, a closed one frees a place', () => {
      const counts: WindowAggregateConfig = { window: { count: 2 }, group_by: { k: 'event.k' }, aggregate: { n: 'count()' }, max_groups: 2 };
      const values = { a: e(1, { k: 'a' }), b: e(2, { k: 'b' }), c: e(3, { k: 'c' }), d: e(4, { k: 'a' }), f: e(5, { k: 'c' }) };
      // a and b open two windows; c overflows; a's second event closes a's window, so c then opens one
      expectWindows(counts, 'abcdf|', values, '--OX-(YZ|)', {
        O: { port: 'overflow', data: { k: 'c' }, meta: {} },
        X: out({ k: 'a', n: 2 }, 0, 3),
        Y: out({ k: 'b', n: 1 }, 1, 1, { partial: true }),
        Z: out({ k: 'c', n: 1 }, 4, 4, { partial: true }),
      });
      const sessions: WindowAggregateConfig = { window: { gap: 10 }, group_by: { k: 'event.k' }, aggregate: { n: 'count()' }, max_groups: 1 };
      expectWindows(sessions, 'ab|', { a: e(1, { k: 'a' }), b: e(2, { k: 'b' }) }, '-O(X|)', {
        O: { port: 'overflow', data: { k: 'b' }, meta: {} },
        X: out({ k: 'a', n: 1 }, 0, 10, { partial: true }),
      });
    });

    it('sends an event whose expression fails to `err`, naming node and field, and does not count it', () => {
      const config: WindowAggregateConfig = { window: { count: 2 }, group_by: { app: 'event.app' }, aggregate: { n: 'count()', s: 'sum(event.size)' } };
      const values = { a: e(1, { app: 'x', size: 1 }), b: e(2, { size: 2 }), c: e(3, { app: 'x', size: 'big' }), d: e(4, { app: 'x', size: 3 }) };
      expectWindows(config, 'abcd|', values, '-EFX|', {
        E: { port: 'err', data: { size: 2 }, meta: { error: 'window::aggregate node w: group_by.app: field not found: app' } },
        F: { port: 'err', data: { app: 'x', size: 'big' }, meta: { error: 'window::aggregate node w: aggregate.s: sum: expected a number, got string' } },
        X: out({ app: 'x', n: 2, s: 4 }, 0, 3),
      });
    });

    it('names the first call whose argument fails when several calls share it', () => {
      const config: WindowAggregateConfig = {
        window: { count: 2 },
        aggregate: { n: 'count()', hi: 'max(event.size)', s: 'sum(event.size)', m: 'mean(event.size)' },
      };
      const values = { a: e(1, { size: 1 }), b: e(2, {}), c: e(3, { size: 'big' }), d: e(4, { size: 3 }) };
      expectWindows(config, 'abcd|', values, '-EFX|', {
        E: { port: 'err', data: {}, meta: { error: 'window::aggregate node w: aggregate.hi: field not found: size' } },
        F: { port: 'err', data: { size: 'big' }, meta: { error: 'window::aggregate node w: aggregate.hi: max: expected a number, got string' } },
        X: out({ n: 2, hi: 3, s: 4, m: 2 }, 0, 3),
      });
    });
  });

  describe('contraflow', () => {
    /** Runs config over the events (all transactional), then answers each output with `answer`; returns what reached the sources. */
    function settle(config: WindowAggregateConfig, events: EddyEvent[], answer: (out: PortEvent) => 'ack' | 'fail' | undefined): Insight[] {
      const s = testScheduler();
      const ctx = testContext(s, 'w');
      const node = windowAggregateNode(config, ctx);
      const outs: PortEvent[] = [];
      s.run(({ cold }) => {
        const values = Object.fromEntries(events.map((x, i) => [String.fromCharCode(97 + i), { ...x, transactional: true }]));
        node.apply(cold(`${Object.keys(values).join('')}|`, values)).subscribe((o) => outs.push(o));
      });
      for (const o of outs) {
        const kind = answer(o);
        if (!kind) continue;
        const passed = node.onInsight!({ kind, event: o.event, from: '/offramp/x/01' });
        expect(passed, 'an insight about an aggregate stops at the operator').to.equal(null);
      }
      return ctx.raised;
    }
    const ids = (raised: Insight[], kind: string) => raised.filter((i) => i.kind === kind).map((i) => i.event!.id.seq);

    it('acks every member when the aggregate is acked, and fails every member when it fails', () => {
      const config: WindowAggregateConfig = { window: { count: 2 }, group_by: { k: 'event.k' }, aggregate: { n: 'count()' } };
      const events = [e(1, { k: 1 }), e(2, { k: 2 }), e(3, { k: 1 }), e(4, { k: 2 })];
      const raised = settle(config, events, (o) => ((o.event.data as { k: number }).k === 1 ? 'ack' : 'fail'));
      expect(ids(raised, 'ack')).to.deep.equal([1, 3]);
      expect(ids(raised, 'fail')).to.deep.equal([2, 4]);
      expect(raised.every((i) => i.from === `${PIPELINE}/w`)).to.equal(true);
    });

    it('acks an event of a sliding window only once every window holding it was acked; the first fail fails it', () => {
      const config: WindowAggregateConfig = { window: { size: 10, hop: 5 }, time: 'event.ts', aggregate: { n: 'count()' } };
      // 7 is in [0,10) and [5,15); 30 closes both (and is flushed at the end)
      const events = [e(1, { ts: 7 }), e(2, { ts: 30 })];
      let acked: Insight[] = settle(config, events, (o) => ((o.event.meta.window as { start: number }).start === 0 ? 'ack' : undefined));
      expect(ids(acked, 'ack'), 'one of two windows acked').to.deep.equal([]);
      acked = settle(config, events, (o) => ((o.event.meta.window as { start: number }).start <= 5 ? 'ack' : undefined));
      expect(ids(acked, 'ack')).to.deep.equal([1]);
      const failed = settle(config, events, (o) => ((o.event.meta.window as { start: number }).start === 5 ? 'fail' : 'ack'));
      expect(ids(failed, 'fail')).to.deep.equal([1]);
      expect(ids(failed, 'ack')).to.deep.equal([2]);
    });

    it('acks every member of sessions an out-of-order event merged when their one output is acked', () => {
      const config: WindowAggregateConfig = { window: { gap: 5 }, time: 'event.ts', allowed_lateness: 100, aggregate: { n: 'count()' } };
      const raised = settle(config, [e(1, { ts: 0 }), e(2, { ts: 8 }), e(3, { ts: 4 })], () => 'ack');
      expect(ids(raised, 'ack').sort()).to.deep.equal([1, 2, 3]);
    });

    it('acks at once what `where` leaves out and what `having` does not emit', () => {
      const config: WindowAggregateConfig = { window: { count: 1 }, where: 'event.keep', aggregate: { n: 'count()' }, having: 'n > 1' };
      const raised = settle(config, [e(1, { keep: false }), e(2, { keep: true })], () => 'fail');
      expect(ids(raised, 'ack')).to.deep.equal([1, 2]);
    });

    it('with on_shutdown: drop, fails the members of the windows still open when the input completes', () => {
      const config: WindowAggregateConfig = { window: { size: 10 }, aggregate: { n: 'count()' }, on_shutdown: 'drop' };
      const s = testScheduler();
      const ctx = testContext(s, 'w');
      const outs: PortEvent[] = [];
      s.run(({ cold }) => {
        windowAggregateNode(config, ctx)
          .apply(cold('ab|', { a: { ...e(1, {}), transactional: true }, b: { ...e(2, {}), transactional: true } }))
          .subscribe((o) => outs.push(o));
      });
      expect(outs).to.deep.equal([]);
      expect(ids(ctx.raised, 'fail')).to.deep.equal([1, 2]);
      expect(ctx.raised[0].meta).to.deep.equal({ error: 'window dropped at shutdown (on_shutdown: drop)' });
    });

    it('passes insights about other events on unchanged', () => {
      const node = windowAggregateNode({ window: { count: 2 }, aggregate: { n: 'count()' } }, testContext(testScheduler()));
      const insight: Insight = { kind: 'ack', event: e(9, {}), from: 'x' };
      expect(node.onInsight!(insight)).to.equal(insight);
    });
  });

  describe('config', () => {
    const bad = (config: unknown, message: string) => expect(() => windowAggregate.validate!(config as WindowAggregateConfig, 'n1')).to.throw(message);

    it('names the node and the field of every mistake', () => {
      bad({ window: {}, aggregate: { n: 'count()' } }, 'window::aggregate node n1: window: give exactly one of size');
      bad({ window: { size: 10, gap: 5 }, aggregate: { n: 'count()' } }, 'got size and gap');
      bad({ window: { size: '10 s' }, aggregate: { n: 'count()' } }, 'window.size: "10 s" is not a duration');
      bad({ window: { size: 10, hop: 20 }, aggregate: { n: 'count()' } }, 'window.hop: must not be longer than window.size');
      bad({ window: { gap: 5, hop: 1 }, aggregate: { n: 'count()' } }, 'window.hop: only with window.size');
      bad({ window: { size: 10 }, aggregate: { n: 'count()' }, allowed_lateness: 5 }, 'allowed_lateness: only with time');
      bad({ window: { size: 10 }, aggregate: { n: 'median(event.x)' } }, "aggregate.n: unknown aggregate function 'median'");
      bad({ window: { size: 10 }, aggregate: { n: 'sum(event.x' } }, 'aggregate.n: "sum(event.x" is not a call');
      bad({ window: { size: 10 }, aggregate: { n: 'sum()' } }, 'aggregate.n: sum(value) takes 1 argument, got 0');
      bad({ window: { size: 10 }, aggregate: { n: 'sum(event.x +)' } }, 'aggregate.n: sum argument 1:');
      bad({ window: { size: 10 }, aggregate: { n: 'count()' }, where: 'event.x ==' }, 'window::aggregate node n1: where:');
      bad({ window: { size: 10 }, aggregate: { n: 'count()' }, group_by: { n: 'event.n' } }, 'group_by.n: the output field is also an aggregate field');
    });

    it('accepts durations as strings', () => {
      expect(
        compilePlan({ window: { size: '1m', hop: '10s' }, time: 'event.ts', allowed_lateness: '1m30s', aggregate: { n: 'count()' } }, 'n').window,
      ).to.deep.equal({ kind: 'hopping', size: 60_000, hop: 10_000 });
      expect(compilePlan({ window: { size: '1m' }, time: 'event.ts', allowed_lateness: '1m30s', aggregate: { n: 'count()' } }, 'n').lateness).to.equal(90_000);
    });
  });

  it('keeps the node uid in the output opMeta, so only its own outputs settle members', () => {
    const s = testScheduler();
    const outs: PortEvent[] = [];
    s.run(({ cold }) => {
      windowAggregateNode({ window: { count: 1 }, aggregate: { n: 'count()' } }, testContext(s))
        .apply(cold('a|', { a: e(1, {}) }))
        .subscribe((o) => outs.push(o));
    });
    expect(outs[0].event.opMeta).to.deep.equal({ [UID]: 1 });
    expect(outs[0].event.id).to.deep.equal({ uid: UID, seq: 1 });
  });
});

describe('window::aggregate window_fields', () => {
  it("writes the window's bounds into each output's data, where having can read them too", () => {
    const config: WindowAggregateConfig = {
      window: { size: 10 },
      group_by: { app: 'event.app' },
      window_fields: { start: 'from', end: 'to' },
      aggregate: { n: 'count()' },
      having: 'from >= 0',
    };
    expectWindows(config, 'a-b|', { a: ev(1, { app: 'x' }), b: ev(2, { app: 'x' }) }, '---(X|)', {
      X: out({ app: 'x', from: 0, to: 10, n: 2 }, 0, 10, { partial: true }),
    });
  });

  it('refuses a bound named like an aggregate or group_by field, naming it', () => {
    expect(() => compilePlan({ window: { size: 10 }, window_fields: { start: 'n' }, aggregate: { n: 'count()' } }, 'w')).to.throw(
      /node w: window_fields.start: the output field "n" is also an aggregate field/,
    );
    expect(() => compilePlan({ window: { size: 10 }, group_by: { g: 'event.g' }, window_fields: { end: 'g' }, aggregate: { n: 'count()' } }, 'w')).to.throw(
      /window_fields.end: the output field "g" is also a group_by field/,
    );
  });
});
