import { expect } from 'chai';
import fc from 'fast-check';
import { Subject, type Subscription } from 'rxjs';
import { compactJson } from '../../src/codecs/json/compact';
import type { EddyEvent, PortEvent } from '../../src/core/event';
import type { OperatorNode } from '../../src/pipeline/operator';
import { reduceNode, type ReduceConfig } from '../../src/pipeline/operators/reduce';
import type { PartitionedState, StateValue } from '../../src/core/state';
import { ev, testContext, testScheduler } from './helpers';
import { Changelog, snapshotAll } from './state-helpers';

/** One input event: ms since the previous one, its partition (an index into the run's partitions), group, flags and field values. */
interface In {
  dt: number;
  p: number;
  g: string;
  s: boolean;
  e: boolean;
  n: unknown;
  t: unknown;
  b: unknown;
  /** data that is not an object (starts_when then fails: err) */
  scalar: boolean;
  /** meta with a binary kafka key */
  key: boolean;
}

/** One emission as the tests compare it. */
interface Out {
  at: number;
  port: string;
  data: unknown;
  meta: unknown;
  partition: string | undefined;
  ingestNs: bigint;
  originUri: string;
}

const PARTITIONS = ['', 'orders/0', 'orders/1', 'orders/2'];

/** A field's value: absent, numbers (integers, doubles, big integers), strings, binary, null, an object. */
const value = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(0.1, 2.5, -0.5, 1e300),
  fc.bigInt({ min: 2n ** 60n, max: 2n ** 60n + 3n }),
  fc.constantFrom('x', 'y', ''),
  fc.nat(255).map((byte) => Buffer.from([byte, 1])),
  fc.constant(null),
  fc.constant({ z: 1 }),
);

const input = fc.record({
  dt: fc.constantFrom(0, 1, 2, 4, 8, 20),
  p: fc.nat(3),
  g: fc.constantFrom('a', 'b', 'c'),
  s: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  e: fc.integer({ min: 0, max: 19 }).map((n) => n < 3),
  n: value,
  t: value,
  b: value,
  scalar: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
  key: fc.boolean(),
});
const inputs = fc.array(input, { maxLength: 50 });
const partitionSets = fc.subarray(PARTITIONS, { minLength: 1 });
const configs = fc.record({
  group_by: fc.constant({ g: 'event.g' }),
  starts_when: fc.constant('event.s'),
  ends_when: fc.constant('event.e'),
  timeout: fc.constantFrom(3, 5, 9),
  max_events: fc.integer({ min: 1, max: 5 }),
  max_groups: fc.integer({ min: 1, max: 3 }),
  merge: fc.record({
    i: fc.constant('array' as const),
    n: fc.constantFrom('sum' as const, 'min' as const, 'max' as const),
    t: fc.constantFrom('concat' as const, 'concat_newline' as const, { strategy: 'concat' as const, separator: ',' }),
    b: fc.constantFrom('first' as const, 'last' as const, 'array' as const),
  }),
});

function eventOf(i: number, e: In, partitions: readonly string[]): EddyEvent {
  const partition = partitions[e.p % partitions.length];
  const data: Record<string, unknown> = { g: e.g, s: e.s, e: e.e, i };
  for (const field of ['n', 't', 'b'] as const) if (e[field] !== undefined) data[field] = e[field];
  return ev(i + 1, e.scalar ? `line ${i}` : data, {
    meta: e.key ? { kafka: { key: Buffer.from([i]) } } : { seq: i },
    ...(partition === '' ? {} : { partition }),
  });
}

function outOf(at: number, o: PortEvent): Out {
  const { data, meta, partition, ingestNs, originUri } = o.event;
  return { at, port: o.port, data, meta, partition, ingestNs, originUri };
}

/**
 * Emissions in time order, a partition's in the order they left: at one
 * instant, the timers of two partitions may fire in either order (a restored
 * node armed its timers at the restore), a partition's own emissions not.
 */
function canonical(outs: readonly Out[]): Out[] {
  return outs
    .map((o, n) => ({ o, n }))
    .sort((x, y) => x.o.at - y.o.at || (x.o.partition ?? '').localeCompare(y.o.partition ?? '') || x.n - y.n)
    .map(({ o }) => o);
}

/**
 * The partitions by name (the order they were made in differs), their entries without `opened`: a number only its order among the
 * partition's reductions means anything by (B's count never saw the
 * reductions A closed before the snapshot), checked by the order of what
 * leaves at the end.
 */
function withoutOpened(all: Map<string, Map<string, StateValue>>): unknown {
  return [...all].sort(([p], [q]) => p.localeCompare(q)).map(([p, entries]) => [p, [...entries].map(([k, v]) => [k, { ...(v as object), opened: undefined }])]);
}

function restoreAll(state: PartitionedState, saved: ReadonlyMap<string, ReadonlyMap<string, StateValue>>): void {
  for (const [partition, entries] of saved) state.restore(partition, entries);
}

describe('generic::reduce state per partition', () => {
  it('a node restored from a snapshot (through JSON) of every partition emits what the original does, at the same virtual times', () => {
    fc.assert(
      fc.property(
        inputs,
        partitionSets,
        configs,
        fc.nat(),
        fc.boolean(),
        fc.constantFrom(1, 30),
        (events, partitions, config: ReduceConfig, cutAt, restoreFirst, tail) => {
          const cut = cutAt % (events.length + 1);
          const s = testScheduler();
          const fromA: Out[] = [];
          const fromB: Out[] = [];
          let a!: OperatorNode;
          let b!: OperatorNode;
          let after = false;
          s.run(() => {
            const input = new Subject<EddyEvent>();
            a = reduceNode(config, testContext(s, 'r'));
            a.apply(input).subscribe((o) => after && fromA.push(outOf(s.now(), o)));
            const split = () => {
              after = true;
              const saved = snapshotAll(a.state!);
              b = reduceNode(config, testContext(s, 'r'));
              // restored before the node is subscribed, its timers start with the subscription
              if (restoreFirst) restoreAll(b.state!, saved);
              b.apply(input).subscribe((o) => fromB.push(outOf(s.now(), o)));
              if (!restoreFirst) restoreAll(b.state!, saved);
              expect(b.state!.takeChanges().size, 'a restore leaves no change to take').to.equal(0);
              expect(snapshotAll(b.state!), 'the restored state').to.deep.equal(saved);
            };
            let t = 0;
            events.forEach((e, i) => {
              t += e.dt;
              if (i === cut) s.schedule(split, t);
              s.schedule(() => input.next(eventOf(i, e, partitions)), t);
            });
            if (cut === events.length) s.schedule(split, t);
            s.schedule(() => {
              expect(withoutOpened(snapshotAll(b.state!)), 'the state before the end').to.deep.equal(withoutOpened(snapshotAll(a.state!)));
              input.complete();
            }, t + tail);
          });
          expect(canonical(fromB)).to.deep.equal(canonical(fromA));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a changelog written from every takeChanges holds the snapshot of every partition, and a node restored from it goes on as one never stopped', () => {
    const steps = fc.array(fc.record({ in: input, act: fc.constantFrom('', '', '', 'take', 'restart') }), { maxLength: 50 });
    fc.assert(
      fc.property(steps, partitionSets, configs, (script, partitions, config: ReduceConfig) => {
        const s = testScheduler();
        const reference: Out[] = [];
        const chain: Out[] = [];
        const log = new Changelog();
        s.run(() => {
          const input = new Subject<EddyEvent>();
          reduceNode(config, testContext(s))
            .apply(input)
            .subscribe((o) => reference.push(outOf(s.now(), o)));
          let node = reduceNode(config, testContext(s));
          let sub: Subscription = node.apply(input).subscribe((o) => chain.push(outOf(s.now(), o)));
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
                node = reduceNode(config, testContext(s));
                restoreAll(node.state!, log.partitions);
                sub = node.apply(input).subscribe((o) => chain.push(outOf(s.now(), o)));
              }
              input.next(eventOf(i, step.in, partitions));
            }, t);
          });
          s.schedule(() => {
            log.take(node.state!);
            log.expectMatches(node.state!, 'before the end');
            input.complete();
          }, t + 30);
          s.schedule(() => {
            log.take(node.state!);
            log.expectMatches(node.state!, 'at the end');
          }, t + 31);
        });
        expect(canonical(chain)).to.deep.equal(canonical(reference));
      }),
      { numRuns: 300 },
    );
  });

  /** Runs a script of [time, action] in virtual time over one node; returns its emissions. */
  function script(
    node: (s: ReturnType<typeof testScheduler>) => OperatorNode,
    steps: [number, (input: Subject<EddyEvent>, node: OperatorNode) => void][],
  ): Out[] {
    const s = testScheduler();
    const got: Out[] = [];
    s.run(() => {
      const input = new Subject<EddyEvent>();
      const made = node(s);
      made.apply(input).subscribe((o) => got.push(outOf(s.now(), o)));
      for (const [at, act] of steps) s.schedule(() => act(input, made), at);
    });
    return got;
  }

  const line = (seq: number, g: string, partition?: string) => ev(seq, { g, v: seq }, partition === undefined ? {} : { partition });
  const config: ReduceConfig = { group_by: { g: 'event.g' }, timeout: 10, merge: { v: 'array' } };

  it('keeps each partition to itself: one group in two partitions is two reductions, each output carries its partition, max_groups counts per partition', () => {
    const outs = script(
      (s) => reduceNode({ ...config, max_groups: 1 }, testContext(s)),
      [
        [0, (i) => i.next(line(1, 'a', 't/0'))],
        [1, (i) => i.next(line(2, 'a', 't/1'))],
        [2, (i) => i.next(line(3, 'a', 't/0'))],
        [3, (i) => i.next(line(4, 'a'))],
        // t/0 holds its one group; t/1's is its own
        [4, (i) => i.next(line(5, 'b', 't/0'))],
        [5, (i) => i.next(line(6, 'a', 't/1'))],
      ],
    );
    expect(outs.map((o) => [o.at, o.port, o.data, o.partition])).to.deep.equal([
      [4, 'overflow', { g: 'b', v: 5 }, 't/0'],
      [12, 'out', { g: 'a', v: [1, 3] }, 't/0'],
      [13, 'out', { g: 'a', v: [4] }, undefined],
      [15, 'out', { g: 'a', v: [2, 6] }, 't/1'],
    ]);
  });

  it('leaves the partition off what an unpartitioned flow reduces', () => {
    const s = testScheduler();
    const got: PortEvent[] = [];
    s.run(({ cold }) => {
      reduceNode(config, testContext(s))
        .apply(cold('a|', { a: line(1, 'a') }))
        .subscribe((o) => got.push(o));
    });
    expect(got).to.have.length(1);
    expect(got[0].event).not.to.have.property('partition');
  });

  it('release drops one partition and its timer, emits nothing, and leaves the others', () => {
    let state!: PartitionedState;
    const outs = script(
      (s) => reduceNode(config, testContext(s)),
      [
        [0, (i, n) => ((state = n.state!), i.next(line(1, 'a', 't/0')))],
        [1, (i) => i.next(line(2, 'a', 't/1'))],
        [2, () => state.takeChanges()],
        [3, (i) => i.next(line(3, 'a', 't/0'))],
        [4, () => state.release('t/0')],
        [
          5,
          () => {
            expect(state.partitions()).to.deep.equal(['t/1']);
            expect(state.takeChanges(), 'nothing of the released partition is left to write').to.deep.equal(new Map());
          },
        ],
        // t/0 is empty: this event opens a new reduction
        [20, (i) => i.next(line(4, 'a', 't/0'))],
        [21, (i) => i.complete()],
      ],
    );
    expect(outs.map((o) => [o.at, o.data, o.partition])).to.deep.equal([
      [11, { g: 'a', v: [2] }, 't/1'],
      [21, { g: 'a', v: [4] }, 't/0'],
    ]);
  });

  it('writes an entry that survives JSON exactly: a binary key, a small BigInt, an integer sum, each noted in `fix`', () => {
    let state!: PartitionedState;
    let entry!: StateValue;
    script(
      (s) => reduceNode({ timeout: 10, merge: { n: 'sum', v: 'array' } }, testContext(s, 'r')),
      [
        [0, (i, n) => ((state = n.state!), i.next(ev(1, { n: 1, v: 'x' }, { meta: { kafka: { key: Buffer.from('k1') } }, partition: 't/0' })))],
        [2, (i) => i.next(ev(2, { n: 2, v: Buffer.from([0, 255]) }, { partition: 't/0' }))],
        [3, () => (entry = state.snapshot('t/0').get(''))],
      ],
    );
    expect(compactJson(entry)).to.equal(
      '{"n":2,"last":2,"opened":1,' +
        '"head":{"data":{"n":1,"v":"x"},"meta":{"kafka":{"key":"azE="}},"ingestNs":1000000,"originUri":"test://host/in"},' +
        '"merge":{"n":{"first":1,"exact":3,"double":3},"v":["x","AP8="]},' +
        '"fix":[["b","head","meta","kafka","key"],["i","head","ingestNs"],["i","merge","n","exact"],["b","merge","v",1]]}',
    );
  });

  it('restores a reduction that emits on time with the merged values, no members to ack, and the partition', () => {
    const saved = {
      n: 2,
      last: 4,
      opened: 7,
      head: { data: { n: 1, v: 'x' }, meta: { kafka: { key: 'azE=' } }, ingestNs: 1000000, originUri: 'test://host/in' },
      merge: { n: { first: 1, exact: 3, double: 3 }, v: ['x', 'AP8='] },
      fix: [
        ['b', 'head', 'meta', 'kafka', 'key'],
        ['i', 'head', 'ingestNs'],
        ['i', 'merge', 'n', 'exact'],
        ['b', 'merge', 'v', 1],
      ],
    };
    const got: PortEvent[] = [];
    const times: number[] = [];
    const s = testScheduler();
    s.run(() => {
      const input = new Subject<EddyEvent>();
      const node = reduceNode({ timeout: 10, merge: { n: 'sum', v: 'array' } }, testContext(s, 'r'));
      // restored at 0, before the node is subscribed: its timer is armed at the subscription (at 6, for 4 + 10 - 6 ms);
      // the event at 8 makes it due at 18
      s.schedule(() => node.state!.restore('t/0', new Map([['', saved]])), 0);
      s.schedule(
        () =>
          node.apply(input).subscribe((o) => {
            got.push(o);
            times.push(s.now());
          }),
        6,
      );
      s.schedule(() => input.next(ev(9, { n: 0.5, v: 'y' }, { partition: 't/0', transactional: true })), 8);
    });
    expect(times).to.deep.equal([18]);
    const out = got[0].event;
    expect(out.data).to.deep.equal({ n: 3.5, v: ['x', Buffer.from([0, 255]), 'y'] });
    expect(out.meta).to.deep.equal({ kafka: { key: Buffer.from('k1') }, reduced: 3 });
    expect(out.ingestNs).to.equal(1000000n);
    expect(out.partition).to.equal('t/0');
    // only the member since the restore is tracked: the others were made durable by the checkpoint that saved them
    expect(out.tracked).to.deep.equal([{ uid: 1, seq: 9 }]);
    expect(out.transactional).to.equal(true);
  });

  it('emits an overdue restored reduction as soon as the scheduler runs (the time left is at least 0)', () => {
    const outs = script(
      (s) => reduceNode(config, testContext(s)),
      [
        [
          50,
          (_i, n) =>
            n.state!.restore(
              '',
              new Map([['a', { n: 1, last: 3, opened: 1, head: { data: { g: 'a', v: 1 }, meta: {}, ingestNs: 5n, originUri: 'x' }, merge: { v: [1] } }]]),
            ),
        ],
      ],
    );
    expect(outs.map((o) => [o.at, o.data, o.partition])).to.deep.equal([[50, { g: 'a', v: [1] }, undefined]]);
  });

  it('refuses an entry it cannot read, naming the node, the partition, the entry and why, and keeps the state it had', () => {
    const s = testScheduler();
    const node = reduceNode({ ...config, merge: { v: 'array', n: 'sum' } }, testContext(s, 'join'));
    const state = node.state!;
    const good = { n: 1, last: 3, opened: 1, head: { data: { g: 'a' }, meta: {}, ingestNs: 5n, originUri: 'x' }, merge: {} };
    state.restore('t/1', new Map([['a', good]]));
    const refuse = (entry: unknown, why: string) =>
      expect(
        () =>
          state.restore(
            't/1',
            new Map([
              ['ok', good],
              ['"b"', entry],
            ]),
          ),
        why,
      ).to.throw(Error, `generic::reduce node join: cannot restore partition "t/1": entry "\\"b\\"": ${why}`);
    refuse('x', 'not an object: "x"');
    refuse({ ...good, n: '1' }, 'n: the count of its events must be a positive integer, got "1"');
    refuse({ ...good, n: 0 }, 'n: the count of its events must be a positive integer, got 0');
    refuse({ ...good, last: null }, 'last: the time of its last event must be a number (scheduler ms), got null');
    refuse({ ...good, opened: -1 }, 'opened: not a non-negative integer: -1');
    refuse({ ...good, head: { ...good.head, meta: [] } }, 'head.meta: not an object: []');
    refuse({ ...good, head: { ...good.head, ingestNs: 'soon' } }, 'head.ingestNs: not an integer: "soon"');
    refuse({ ...good, merge: { v: 'x' } }, 'merge.v (array): not a list: "x"');
    refuse({ ...good, merge: { n: { first: 1, exact: 'x', double: 1 } } }, 'merge.n (sum): exact: not an integer or null: "x"');
    refuse({ ...good, fix: [['b', 'head', 'nope']] }, 'fix[0]: the path has no "nope"');
    refuse({ ...good, fix: [['b', 'head', 'originUri']] }, 'fix[0]: binary data must be a base64 string, got "x"');
    refuse({ ...good, fix: [['q', 'n']] }, 'fix[0]: unknown kind "q"');
    expect([...state.snapshot('t/1').keys()]).to.deep.equal(['a']);
  });
});
