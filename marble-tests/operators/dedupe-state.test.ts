import { expect } from 'chai';
import fc from 'fast-check';
import { Subject, type Subscription } from 'rxjs';
import type { EddyEvent, PortEvent } from '../../src/core/event';
import type { OperatorNode } from '../../src/pipeline/operator';
import { dedupeNode, type DedupeConfig } from '../../src/pipeline/operators/dedupe';
import type { PartitionedState, StateValue } from '../../src/core/state';
import { ev, testContext, testScheduler } from './helpers';
import { Changelog, snapshotAll } from './state-helpers';

/** One input event: ms since the previous one, its partition (an index into the run's partitions) and key. */
interface In {
  dt: number;
  p: number;
  k: string;
}

/** One emission as the tests compare it. */
interface Out {
  at: number;
  port: string;
  data: unknown;
  partition: string | undefined;
}

const PARTITIONS = ['', 'orders/0', 'orders/1', 'orders/2'];

const input = fc.record({
  dt: fc.constantFrom(0, 1, 3, 7),
  p: fc.nat(3),
  k: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
});
const inputs = fc.array(input, { maxLength: 50 });
const partitionSets = fc.subarray(PARTITIONS, { minLength: 1 });
const configs = fc.record(
  { key: fc.constant('event.k'), within: fc.constantFrom(4, 10, 30), max_keys: fc.integer({ min: 1, max: 4 }) },
  { requiredKeys: ['key', 'max_keys'] },
);

function eventOf(i: number, e: In, partitions: readonly string[]): EddyEvent {
  const partition = partitions[e.p % partitions.length];
  return ev(i + 1, { k: e.k, i }, partition === '' ? {} : { partition });
}

function outOf(at: number, o: PortEvent): Out {
  return { at, port: o.port, data: o.event.data, partition: o.event.partition };
}

function restoreAll(state: PartitionedState, saved: ReadonlyMap<string, ReadonlyMap<string, StateValue>>): void {
  for (const [partition, entries] of saved) state.restore(partition, entries);
}

describe('generic::dedupe state per partition', () => {
  it('a node restored from a snapshot (through JSON) of every partition goes on exactly as the original', () => {
    fc.assert(
      fc.property(inputs, partitionSets, configs, fc.nat(), fc.boolean(), (events, partitions, config: DedupeConfig, cutAt, restoreFirst) => {
        const cut = cutAt % (events.length + 1);
        const s = testScheduler();
        const fromA: Out[] = [];
        const fromB: Out[] = [];
        let a!: OperatorNode;
        let b!: OperatorNode;
        let after = false;
        s.run(() => {
          const input = new Subject<EddyEvent>();
          a = dedupeNode(config, testContext(s, 'dd'));
          a.apply(input).subscribe((o) => after && fromA.push(outOf(s.now(), o)));
          const split = () => {
            after = true;
            const saved = snapshotAll(a.state!);
            b = dedupeNode(config, testContext(s, 'dd'));
            if (restoreFirst) restoreAll(b.state!, saved);
            b.apply(input).subscribe((o) => fromB.push(outOf(s.now(), o)));
            if (!restoreFirst) restoreAll(b.state!, saved);
            expect(b.state!.takeChanges().size, 'a restore leaves no change to take').to.equal(0);
          };
          let t = 0;
          events.forEach((e, i) => {
            t += e.dt;
            if (i === cut) s.schedule(split, t);
            s.schedule(() => input.next(eventOf(i, e, partitions)), t);
          });
          if (cut === events.length) s.schedule(split, t);
          s.schedule(() => input.complete(), t + 1);
        });
        expect(fromB).to.deep.equal(fromA);
        expect(snapshotAll(b.state!), 'and holds the same state at the end').to.deep.equal(snapshotAll(a.state!));
      }),
      { numRuns: 300 },
    );
  });

  it('a changelog written from every takeChanges holds the snapshot of every partition, and a node restored from it goes on as one never stopped', () => {
    const steps = fc.array(fc.record({ in: input, act: fc.constantFrom('', '', '', 'take', 'restart') }), {
      maxLength: 50,
    });
    fc.assert(
      fc.property(steps, partitionSets, configs, (script, partitions, config: DedupeConfig) => {
        const s = testScheduler();
        const reference: Omit<Out, 'at'>[] = [];
        const chain: Omit<Out, 'at'>[] = [];
        const log = new Changelog();
        s.run(() => {
          const input = new Subject<EddyEvent>();
          dedupeNode(config, testContext(s))
            .apply(input)
            .subscribe((o) => reference.push(outOf(0, o)));
          let node = dedupeNode(config, testContext(s));
          let sub: Subscription = node.apply(input).subscribe((o) => chain.push(outOf(0, o)));
          let t = 0;
          script.forEach((step, i) => {
            t += step.in.dt;
            s.schedule(() => {
              if (step.act === 'take' || step.act === 'restart') {
                log.take(node.state!);
                log.expectMatches(node.state!, `after a take before event ${i}`);
              }
              if (step.act === 'restart') {
                // kill -9 after the checkpoint: a fresh node from the changelog alone
                sub.unsubscribe();
                node = dedupeNode(config, testContext(s));
                restoreAll(node.state!, log.partitions);
                sub = node.apply(input).subscribe((o) => chain.push(outOf(0, o)));
              }
              input.next(eventOf(i, step.in, partitions));
            }, t);
          });
          s.schedule(() => {
            log.take(node.state!);
            log.expectMatches(node.state!, 'at the end');
            input.complete();
          }, t + 1);
        });
        expect(chain).to.deep.equal(reference);
      }),
      { numRuns: 300 },
    );
  });

  /** Feeds events through one node, one per ms from 0, and returns the ports, in order. */
  function ports(node: OperatorNode, s: ReturnType<typeof testScheduler>, events: EddyEvent[]): string[] {
    const got: string[] = [];
    s.run(() => {
      const input = new Subject<EddyEvent>();
      node.apply(input).subscribe((o) => got.push(o.port));
      events.forEach((e, i) => s.schedule(() => input.next(e), i));
    });
    return got;
  }

  const at = (seq: number, k: string, partition?: string) => ev(seq, { k }, partition === undefined ? {} : { partition });

  it('keeps each partition to itself: the same key in two partitions is not a repeat, and max_keys counts per partition', () => {
    const s = testScheduler();
    const node = dedupeNode({ key: 'event.k', max_keys: 2 }, testContext(s, 'dd'));
    expect(
      ports(node, s, [at(1, 'x', 't/0'), at(2, 'x', 't/1'), at(3, 'x'), at(4, 'x', 't/0'), at(5, 'y', 't/1'), at(6, 'z', 't/1'), at(7, 'x', 't/0')]),
    ).to.deep.equal([
      'out',
      'out',
      'out',
      'duplicate',
      'out',
      'out',
      // t/1's keys y and z pushed its x out, not t/0's
      'duplicate',
    ]);
    const state = node.state!;
    expect(state.partitions().sort()).to.deep.equal(['', 't/0', 't/1']);
    expect([...state.snapshot('t/0')]).to.deep.equal([['"x"', 0]]);
    expect([...state.snapshot('t/1')]).to.deep.equal([
      ['"y"', 4],
      ['"z"', 5],
    ]);
  });

  it('writes a repeat as a change of its key (it moved in the recency order), and an eviction as a removal', () => {
    const s = testScheduler();
    const node = dedupeNode({ key: 'event.k', max_keys: 2 }, testContext(s, 'dd'));
    const state = node.state!;
    let first!: unknown;
    let second!: unknown;
    let third!: unknown;
    s.run(() => {
      const input = new Subject<EddyEvent>();
      node.apply(input).subscribe();
      s.schedule(() => input.next(at(1, 'a')), 1);
      s.schedule(() => input.next(at(2, 'b')), 2);
      s.schedule(() => (first = state.takeChanges()), 3);
      s.schedule(() => input.next(at(3, 'a')), 4);
      s.schedule(() => (second = state.takeChanges()), 5);
      s.schedule(() => input.next(at(4, 'c')), 6);
      s.schedule(() => (third = state.takeChanges()), 7);
    });
    // the first take gives every entry (nothing was tracked before it), least recently seen first
    expect(first).to.deep.equal(
      new Map([
        [
          '',
          new Map([
            ['"a"', 1],
            ['"b"', 2],
          ]),
        ],
      ]),
    );
    // the repeat of a keeps its first sighting but is now the most recent: a before b is no longer the order
    expect(second).to.deep.equal(new Map([['', new Map([['"a"', 1]])]]));
    // c evicts b, the least recently seen
    expect(third).to.deep.equal(
      new Map([
        [
          '',
          new Map<string, unknown>([
            ['"b"', undefined],
            ['"c"', 6],
          ]),
        ],
      ]),
    );
    expect([...state.snapshot('')]).to.deep.equal([
      ['"a"', 1],
      ['"c"', 6],
    ]);
  });

  it('release drops one partition, its pending changes too, and leaves the others', () => {
    const s = testScheduler();
    const node = dedupeNode({ key: 'event.k' }, testContext(s, 'dd'));
    const state = node.state!;
    const got: string[] = [];
    s.run(() => {
      const input = new Subject<EddyEvent>();
      node.apply(input).subscribe((o) => got.push(o.port));
      s.schedule(() => input.next(at(1, 'x', 't/0')), 1);
      s.schedule(() => input.next(at(2, 'x', 't/1')), 2);
      s.schedule(() => state.takeChanges(), 3);
      s.schedule(() => input.next(at(3, 'y', 't/0')), 4);
      s.schedule(() => state.release('t/0'), 5);
      s.schedule(() => {
        expect(state.partitions()).to.deep.equal(['t/1']);
        expect(state.takeChanges(), 'nothing of the released partition is left to write').to.deep.equal(new Map());
        expect(state.snapshot('t/0')).to.deep.equal(new Map());
      }, 6);
      s.schedule(() => input.next(at(4, 'x', 't/0')), 7);
      s.schedule(() => input.next(at(5, 'x', 't/1')), 8);
    });
    expect(got).to.deep.equal(['out', 'out', 'out', 'out', 'duplicate']);
  });

  it('refuses an entry it cannot read, naming the node, the partition, the entry and why, and keeps the state it had', () => {
    const s = testScheduler();
    const node = dedupeNode({ key: 'event.k' }, testContext(s, 'once'));
    const state = node.state!;
    state.restore('t/3', new Map([['"a"', 5]]));
    expect(() =>
      state.restore(
        't/3',
        new Map<string, unknown>([
          ['"b"', 6],
          ['"c"', '7'],
        ]),
      ),
    ).to.throw(
      Error,
      'generic::dedupe node once: cannot restore partition "t/3": entry "\\"c\\"": the first-seen time must be a number (scheduler ms), got "7"',
    );
    expect(() => state.restore('t/4', new Map([['"d"', null]]))).to.throw('entry "\\"d\\"": the first-seen time must be a number (scheduler ms), got null');
    expect([...state.snapshot('t/3')]).to.deep.equal([['"a"', 5]]);
    expect(state.partitions()).to.deep.equal(['t/3']);
  });

  it('restores more entries than max_keys as the Lru would: the newest stay, the others are removals to write', () => {
    const s = testScheduler();
    const node = dedupeNode({ key: 'event.k', max_keys: 2 }, testContext(s));
    const state = node.state!;
    state.restore(
      '',
      new Map([
        ['"a"', 1],
        ['"b"', 2],
        ['"c"', 3],
      ]),
    );
    expect([...state.snapshot('')]).to.deep.equal([
      ['"b"', 2],
      ['"c"', 3],
    ]);
    expect(state.takeChanges()).to.deep.equal(new Map([['', new Map([['"a"', undefined]])]]));
  });
});
