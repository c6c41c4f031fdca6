import { expect } from 'chai';
import { map } from 'rxjs';
import type { EddyEvent, PortEvent } from '../../src/core/event';
import { compilePlan, windowAggregateNode, type WindowAggregateConfig } from '../../src/pipeline/operators/window-aggregate';
import type { StateValue } from '../../src/core/state';
import { ev, testContext, testScheduler } from './helpers';

/** What a test compares of an emission: the port, the data, the window and the partition. */
const seen = ({ port, event }: PortEvent) => ({ port, data: event.data, window: event.meta.window, partition: event.partition });

const out = (data: unknown, start: number, end: number, partition?: string) => ({ port: 'out', data, window: { start, end }, partition });

/** Event time `ts` on source partition `p`. */
const at = (seq: number, p: string, ts: number, k = 'a'): EddyEvent => ev(seq, { ts, k }, { partition: p });

describe('window::aggregate per source partition (event time)', () => {
  const config: WindowAggregateConfig = {
    window: { size: 10 },
    time: 'event.ts',
    idle_timeout: 5,
    group_by: { k: 'event.k' },
    aggregate: { n: 'count()' },
  };

  function run(input: string, values: Record<string, EddyEvent>, expected: string, outputs: Record<string, unknown>, cfg = config): void {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const node = windowAggregateNode(cfg, testContext(s, 'w'));
      expectObservable(node.apply(cold(input, values)).pipe(map(seen))).toBe(expected, outputs);
    });
  }

  it("keeps a watermark per partition: one partition's backlog is not late behind another's progress", () => {
    // p0 runs ahead to 35; p1's events at 3 and 8 are behind p0's watermark but on time for p1 (its watermark is its own)
    const values = { a: at(1, 'p0', 2), b: at(2, 'p0', 35), c: at(3, 'p1', 3), d: at(4, 'p1', 8), e: at(5, 'p1', 12) };
    // on_shutdown: drop, so only what the watermarks closed shows (p1's [10,20) is still open at the end)
    run('abcde|', values, '-X--Y|', { X: out({ k: 'a', n: 1 }, 0, 10, 'p0'), Y: out({ k: 'a', n: 2 }, 0, 10, 'p1') }, { ...config, on_shutdown: 'drop' });
  });

  it('groups of two partitions are apart: the same key in two partitions makes two outputs', () => {
    const values = { a: at(1, 'p0', 1), b: at(2, 'p1', 2), c: at(3, 'p0', 11), d: at(4, 'p1', 12) };
    run('abcd|', values, '--XY|', { X: out({ k: 'a', n: 1 }, 0, 10, 'p0'), Y: out({ k: 'a', n: 1 }, 0, 10, 'p1') }, { ...config, on_shutdown: 'drop' });
  });

  it('an idle partition stops holding its windows open: they close once the active partitions pass them', () => {
    // p1 has one event at t=4 (frame 1) and is silent after; p0 moves on. At frame 7 p1 has been idle for 6 >= 5
    // frames: its window [0,10) closes when p0's watermark (25) passes it, not before (frame 3: p1 still active)
    const values = { a: at(1, 'p0', 1), b: at(2, 'p1', 4), c: at(3, 'p0', 15), d: at(4, 'p0', 25) };
    run(
      'ab-c---d----|',
      values,
      '---X---(YZ)-|',
      {
        X: out({ k: 'a', n: 1 }, 0, 10, 'p0'),
        Y: out({ k: 'a', n: 1 }, 10, 20, 'p0'),
        Z: out({ k: 'a', n: 1 }, 0, 10, 'p1'),
      },
      { ...config, on_shutdown: 'drop' },
    );
  });

  it('an idle partition waits while it is within idle_timeout', () => {
    const values = { a: at(1, 'p0', 1), b: at(2, 'p1', 4), c: at(3, 'p0', 25) };
    // p1 last seen at frame 1, p0's 25 arrives at frame 3: p1 not idle yet (2 < 5), so its window stays open
    run('ab-c|', values, '---X|', { X: out({ k: 'a', n: 1 }, 0, 10, 'p0') }, { ...config, on_shutdown: 'drop' });
  });

  it("a partition's idle time counts from its last event, also while it was the only one", () => {
    // p0 alone until frame 8 (its event at ts 12 opens [10,20)); p1 comes at frame 9 far ahead: p0 is not idle
    // (last seen 1 frame ago), so its window stays open instead of following p1's watermark
    const values = { a: at(1, 'p0', 1), b: at(2, 'p0', 12), c: at(3, 'p1', 30) };
    run('a-------bc|', values, '--------X-|', { X: out({ k: 'a', n: 1 }, 0, 10, 'p0') }, { ...config, on_shutdown: 'drop' });
  });

  /** `run` (on_shutdown: drop) with `signals` told to the node's state at their frames: [frame, source, reading]. */
  function runReading(
    signals: [number, string, boolean][],
    input: string,
    values: Record<string, EddyEvent>,
    expected: string,
    outputs: Record<string, unknown>,
  ): void {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const node = windowAggregateNode({ ...config, on_shutdown: 'drop' }, testContext(s, 'w'));
      for (const [frame, source, reading] of signals) s.schedule(() => node.state!.sourceReading!(source, reading), frame);
      expectObservable(node.apply(cold(input, values)).pipe(map(seen))).toBe(expected, outputs);
    });
  }

  // p0 at ts 1, p1 at ts 4, then after a pause p0 far ahead and p1's backlog (8, then 15)
  const backlog = { a: at(1, 'p0', 1), b: at(2, 'p1', 4), c: at(3, 'p0', 25), d: at(4, 'p1', 8), e: at(5, 'p1', 15) };
  const backlogCounted = { X: out({ k: 'a', n: 1 }, 0, 10, 'p0'), Y: out({ k: 'a', n: 2 }, 0, 10, 'p1') };

  it('does not count the time its source read nothing: after a long pause a backlog is on time, not idle', () => {
    // the source stops reading at frame 2 (a restore, a breaker) and reads again at 20: p0 speaks first, far ahead;
    // p1 read nothing for 1 frame of reading, not 19, so it is not idle and its backlog (ts 8) is counted in [0,10)
    runReading(
      [
        [2, 'onramp', false],
        [20, 'onramp', true],
      ],
      'ab 19ms cde|',
      backlog,
      '21ms X-Y|',
      backlogCounted,
    );
  });

  it('stands still until every stopped source reads again; a repeated signal changes nothing', () => {
    // two sources stop (frames 2, 3); one reads again at 4, the other at 30; a repeated `true` at 5 does not restart
    // the clock: p1 is still not idle when p0 speaks at 31
    runReading(
      [
        [2, 'one', false],
        [3, 'two', false],
        [4, 'one', true],
        [5, 'one', true],
        [30, 'two', true],
      ],
      'ab 29ms cde|',
      backlog,
      '31ms X-Y|',
      backlogCounted,
    );
  });

  it('counts the time while its source reads: a partition silent for idle_timeout of reading is idle after a pause', () => {
    // stopped from 2 to 4; p0 speaks at frame 9: p1 has 1 + 5 = 6 frames of reading without events (>= 5), so it is
    // idle and its window [0,10) closes on p0's watermark; its event at ts 8 afterwards is late
    runReading(
      [
        [2, 'onramp', false],
        [4, 'onramp', true],
      ],
      'ab 7ms c---d|',
      backlog,
      '9ms (XY)Z|',
      {
        X: out({ k: 'a', n: 1 }, 0, 10, 'p0'),
        Y: out({ k: 'a', n: 1 }, 0, 10, 'p1'),
        Z: { port: 'late', data: { ts: 8, k: 'a' }, window: undefined, partition: 'p1' },
      },
    );
  });

  it('an unpartitioned source is one partition: its outputs carry no partition', () => {
    const plain = (seq: number, ts: number) => ev(seq, { ts, k: 'a' });
    run('ab|', { a: plain(1, 1), b: plain(2, 11) }, '-X|', { X: out({ k: 'a', n: 1 }, 0, 10, undefined) }, { ...config, on_shutdown: 'drop' });
  });

  it('refuses idle_timeout without time, naming the field', () => {
    expect(() => compilePlan({ window: { size: 10 }, idle_timeout: '5s', aggregate: { n: 'count()' } }, 'w')).to.throw(/node w: idle_timeout: only with time/);
  });
});

describe('window::aggregate: a partition taken over resumes from its saved state', () => {
  const config: WindowAggregateConfig = {
    window: { size: 10 },
    time: 'event.ts',
    allowed_lateness: 2,
    group_by: { k: 'event.k' },
    aggregate: { n: 'count()' },
    on_shutdown: 'drop',
  };

  /** Runs `events` (the input never completes: a completion would flush the windows) through a fresh node restored with `restored` per partition; returns the outputs and the snapshot after. */
  function runRestored(
    restored: Map<string, Map<string, StateValue>>,
    events: EddyEvent[],
  ): { outputs: unknown[]; after: Map<string, Map<string, StateValue>> } {
    const s = testScheduler();
    const outputs: unknown[] = [];
    const after = new Map<string, Map<string, StateValue>>();
    s.run(({ cold }) => {
      const node = windowAggregateNode(config, testContext(s, 'w'));
      for (const [p, entries] of restored) node.state!.restore(p, entries);
      const values = Object.fromEntries(events.map((e, i) => [String.fromCharCode(97 + i), e]));
      node.apply(cold(events.map((_, i) => String.fromCharCode(97 + i)).join(''), values)).subscribe((o) => outputs.push(seen(o)));
      s.flush();
      for (const p of node.state!.partitions()) after.set(p, node.state!.snapshot(p));
    });
    return { outputs, after };
  }

  it('a restored half-filled window counts its earlier events once, and its backlog is on time (the watermark came with it)', () => {
    // before the takeover: p1 saw 3, 5 and 13 (watermark 11: [0,10) closed, [10,20) open with one event)
    const before = runRestored(new Map(), [at(1, 'p1', 3), at(2, 'p1', 5), at(3, 'p1', 13)]);
    expect(before.outputs).to.deep.equal([out({ k: 'a', n: 2 }, 0, 10, 'p1')]);
    const saved = new Map([['p1', before.after.get('p1')!]]);
    expect(saved.get('p1')!.get('wm')).to.equal(11);
    // the new owner restores, then the backlog: 12 (on time for p1: watermark 11 < 20), 18, then 25 closes [10,20)
    const after = runRestored(saved, [at(4, 'p1', 12), at(5, 'p1', 18), at(6, 'p1', 25)]);
    expect(after.outputs).to.deep.equal([out({ k: 'a', n: 3 }, 10, 20, 'p1')]);
  });

  it('an event behind the restored watermark is late, as it would have been before', () => {
    const before = runRestored(new Map(), [at(1, 'p1', 3), at(2, 'p1', 15)]);
    const after = runRestored(new Map([['p1', before.after.get('p1')!]]), [at(3, 'p1', 4)]);
    expect(after.outputs).to.deep.equal([{ port: 'late', data: { ts: 4, k: 'a' }, window: undefined, partition: 'p1' }]);
  });

  it('release drops a partition without emitting anything; the others go on', () => {
    const s = testScheduler();
    const outputs: unknown[] = [];
    s.run(({ cold }) => {
      const node = windowAggregateNode(config, testContext(s, 'w'));
      const values = { a: at(1, 'p0', 1), b: at(2, 'p1', 2), c: at(3, 'p0', 15), d: at(4, 'p1', 15) };
      node.apply(cold('ab-c-d|', values)).subscribe((o) => outputs.push(seen(o)));
      s.schedule(() => node.state!.release('p1'), 2);
      s.flush();
      expect(node.state!.partitions()).to.deep.equal(['p0', 'p1']);
    });
    // p1's window [0,10) was dropped at frame 2; its event at 15 opened a fresh window (watermark from scratch)
    expect(outputs).to.deep.equal([out({ k: 'a', n: 1 }, 0, 10, 'p0')]);
  });
});

describe('window::aggregate saved with its sources (guarantee: exactly_once)', () => {
  const config: WindowAggregateConfig = { window: { size: 10 }, time: 'event.ts', group_by: { k: 'event.k' }, aggregate: { n: 'count()' } };

  it('acks an event once a window holds it, its outputs answer for none, and a stop keeps the open windows instead of emitting them', () => {
    const s = testScheduler();
    const ctx = testContext(s, 'w');
    const outputs: PortEvent[] = [];
    const node = windowAggregateNode(config, ctx);
    node.state!.savedWithSources!();
    const values = { a: at(1, 'p0', 1), b: at(2, 'p0', 4), c: at(3, 'p0', 12) };
    for (const e of Object.values(values)) e.transactional = true;
    s.run(({ cold }) => {
      node.apply(cold('abc|', values)).subscribe((o) => outputs.push(o));
    });
    // every event acked as it was taken in, in order; nothing held for the outputs
    expect(ctx.raised.map((i) => [i.kind, i.event?.id.seq])).to.deep.equal([
      ['ack', 1],
      ['ack', 2],
      ['ack', 3],
    ]);
    // [0,10) closed by the event at 12; [10,20) was open at the stop: kept, not emitted partial
    expect(outputs.map(seen)).to.deep.equal([out({ k: 'a', n: 2 }, 0, 10, 'p0')]);
    expect(outputs[0].event.transactional).to.equal(false);
    expect([...node.state!.snapshot('p0').keys()]).to.deep.equal(['wm', 'f:10:a']);
  });
});
