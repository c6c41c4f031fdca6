import { expect } from 'chai';
import type { EddyEvent, Insight } from '../../src/core/event';
import { walNode } from '../../src/pipeline/operators/wal';
import { MemoryWalStorage } from '../../src/pipeline/operators/wal/storage';
import { PIPELINE, UID, ev, testContext, testScheduler } from './helpers';

/** What the WAL sends downstream for an input event stored under `seq`. */
const stored = (e: EddyEvent, seq: number): EddyEvent => ({ ...e, id: { uid: UID, seq }, transactional: true });
const about = (kind: Insight['kind'], seq: number): Insight => ({ kind, event: stored(ev(seq), seq), from: '/offramp/o/01' });
const from = `${PIPELINE}/op`;

describe('qos::wal', () => {
  it('should persist, ack transactional sources once stored, and pass events on with its own ids', () => {
    const s = testScheduler();
    const ctx = testContext(s);
    const storage = new MemoryWalStorage();
    const a = ev(1, 'a', { transactional: true, opMeta: { 7: 'x' } });
    const b = ev(2, 'b');
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const node = walNode({ read_count: 10, max_elements: 100 }, ctx, storage);
      const e1 = cold('-a-b-|', { a, b });
      const e1subs = ' ^----!';
      const unsub = '  --------!';
      const { opMeta: _o, ...aPlain } = a;
      expectObservable(node.apply(e1), unsub).toBe('-A-B----', { A: { port: 'out', event: stored(aPlain, 1) }, B: { port: 'out', event: stored(b, 2) } });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
    expect(ctx.raised).to.deep.equal([{ kind: 'ack', event: a, from }]);
    expect([...storage.data.keys()]).to.deep.equal([1, 2]);
  });

  it('should delete acked events and replay from a failed one', () => {
    const s = testScheduler();
    const storage = new MemoryWalStorage();
    s.run(({ cold, expectObservable }) => {
      const node = walNode({ read_count: 10, max_elements: 100 }, testContext(s), storage);
      s.schedule(() => expect(node.onInsight?.(about('ack', 1))).to.equal(null), 4);
      s.schedule(() => expect(node.onInsight?.(about('fail', 2))).to.equal(null), 5);
      const [a, b, c] = [ev(1), ev(2), ev(3)];
      const e1 = cold('abc------|', { a, b, c });
      expectObservable(node.apply(e1), '---------!').toBe('ABC--(BC)', {
        A: { port: 'out', event: stored(a, 1) },
        B: { port: 'out', event: stored(b, 2) },
        C: { port: 'out', event: stored(c, 3) },
      });
    });
    expect([...storage.data.keys()]).to.deep.equal([2, 3]);
  });

  it('should hold events while its output is triggered and send them on restore', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const node = walNode({ read_count: 10, max_elements: 100 }, testContext(s), new MemoryWalStorage());
      s.schedule(() => expect(node.onInsight?.({ kind: 'trigger', from: '/offramp/o/01' })).to.equal(null), 1);
      s.schedule(() => node.onInsight?.({ kind: 'restore', from: '/offramp/o/01' }), 6);
      const [a, b, c] = [ev(1), ev(2), ev(3)];
      expectObservable(node.apply(cold('a-bc----|', { a, b, c })), '--------!').toBe('A-----(BC)', {
        A: { port: 'out', event: stored(a, 1) },
        B: { port: 'out', event: stored(b, 2) },
        C: { port: 'out', event: stored(c, 3) },
      });
    });
  });

  it('should send at most read_count events per turn', () => {
    const s = testScheduler();
    s.run(({ cold, expectObservable }) => {
      const node = walNode({ read_count: 2, max_elements: 100 }, testContext(s), new MemoryWalStorage());
      s.schedule(() => node.onInsight?.({ kind: 'trigger', from: 'o' }), 0);
      s.schedule(() => node.onInsight?.({ kind: 'restore', from: 'o' }), 2);
      const [a, b, c] = [ev(1), ev(2), ev(3)];
      // restored at 2: the first turn sends a and b, the next turn (same frame, later) c
      expectObservable(node.apply(cold('-(abc)---|', { a, b, c })), '-----!').toBe('--(ABC)', {
        A: { port: 'out', event: stored(a, 1) },
        B: { port: 'out', event: stored(b, 2) },
        C: { port: 'out', event: stored(c, 3) },
      });
    });
  });

  it('should trigger upstream when full and restore when acks drain it', () => {
    const s = testScheduler();
    const ctx = testContext(s);
    s.run(({ cold, expectObservable }) => {
      const node = walNode({ read_count: 10, max_elements: 2 }, ctx, new MemoryWalStorage());
      s.schedule(() => expect(ctx.raised).to.deep.equal([{ kind: 'trigger', from }]), 3);
      s.schedule(() => node.onInsight?.(about('ack', 1)), 4);
      const [a, b] = [ev(1), ev(2)];
      expectObservable(node.apply(cold('ab---|', { a, b })), '------!').toBe('AB----', {
        A: { port: 'out', event: stored(a, 1) },
        B: { port: 'out', event: stored(b, 2) },
      });
    });
    expect(ctx.raised).to.deep.equal([
      { kind: 'trigger', from },
      { kind: 'restore', from },
    ]);
  });

  it('should replay unacked events when a new node opens the same storage', () => {
    const s = testScheduler();
    const storage = new MemoryWalStorage();
    const [a, b, c] = [ev(1), ev(2), ev(3)];
    s.run(({ cold, expectObservable }) => {
      const first = walNode({ read_count: 10, max_elements: 100 }, testContext(s), storage);
      s.schedule(() => first.onInsight?.(about('ack', 1)), 3);
      expectObservable(first.apply(cold('ab--|', { a, b })), '----!').toBe('AB--', {
        A: { port: 'out', event: stored(a, 1) },
        B: { port: 'out', event: stored(b, 2) },
      });
    });
    // a new scheduler: the restart begins at frame 0 again
    const s2 = testScheduler();
    s2.run(({ cold, expectObservable }) => {
      const second = walNode({ read_count: 10, max_elements: 100 }, testContext(s2), storage);
      // b is replayed first; c gets the next seq, never reusing one
      expectObservable(second.apply(cold('--c-|', { c })), '----!').toBe('B-C-', {
        B: { port: 'out', event: stored(b, 2) },
        C: { port: 'out', event: stored(c, 3) },
      });
    });
  });

  it('should pass insights about events it did not store', () => {
    const node = walNode({ read_count: 1, max_elements: 1 }, testContext(testScheduler()), new MemoryWalStorage());
    const foreign: Insight = { kind: 'ack', event: ev(5), from: 'x' };
    expect(node.onInsight?.(foreign)).to.equal(foreign);
  });
});
