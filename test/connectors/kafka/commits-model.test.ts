/**
 * CommitTracker against a naive model, over random interleavings of reads,
 * decodes, acks, fails (a seek with retry), commits (applied by the broker
 * or refused, as during a rebalance) and rejoins of the group that keep some
 * partitions and move the others to another member. A small simulation of
 * the onramp's reads drives it: after a rejoin, and after a fail that asks
 * for a message again (the client has no seek: the onramp opens a fresh
 * stream), every assigned partition is read again from the broker's
 * committed offset.
 *
 * The model checks, per partition and per generation (a generation of a
 * partition ends when it is assigned to another member):
 * - every offset reaches the pipeline once, unless a seek asked for it again;
 *   a message that is not handed over was handed over before in this
 *   generation and no seek asked for it;
 * - a commit is only ever of a partition assigned to this member, never goes
 *   back, and never passes an offset whose latest delivery is not all acked;
 * - in the end (everything read and acked) the committed offsets are the end
 *   offsets.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { CommitTracker, type Entry } from '../../../src/connectors/kafka/commits';

const TOPIC = 't';
const PARTITIONS = 3;
const LENGTH = 10;

type Op =
  | { kind: 'read'; p: number; n: number }
  | { kind: 'decode'; i: number; events: number }
  | { kind: 'ack'; i: number }
  | { kind: 'fail'; i: number }
  | { kind: 'commit' }
  | { kind: 'lose' }
  | { kind: 'rejoin'; keep: boolean[] };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('read' as const), p: fc.nat(PARTITIONS - 1), n: fc.integer({ min: 1, max: 4 }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('decode' as const), i: fc.nat(), events: fc.integer({ min: 0, max: 2 }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('ack' as const), i: fc.nat() }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('fail' as const), i: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('commit' as const) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('lose' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('rejoin' as const), keep: fc.array(fc.boolean(), { minLength: PARTITIONS, maxLength: PARTITIONS }) }), weight: 1 },
);

/** One hand-over of one offset: its events are its own, later ones do not count for it. */
interface Delivery {
  p: number;
  offset: number;
  open: number;
  ended: boolean;
}

/** What the model knows of one partition in its current generation. */
interface Generation {
  /** the committed offset when this member got the partition: everything before it was delivered by someone */
  start: number;
  /** times each offset was handed over */
  handed: Map<number, number>;
  /** offsets a seek asked for again since they were last handed over */
  again: Set<number>;
  /** the latest delivery of each offset handed over */
  latest: Map<number, Delivery>;
  /** offsets whose latest delivery is all acked (or made no event) */
  acked: Set<number>;
}

class Simulation {
  readonly tracker: CommitTracker;
  /** the broker's committed offset per partition */
  readonly committed = Array.from({ length: PARTITIONS }, () => 0);
  /** where the consumer reads next, per assigned partition */
  private readonly position = new Map<number, number>();
  private readonly gen = new Map<number, Generation>();
  private readonly undecoded: { entry: Entry; delivery: Delivery }[] = [];
  private readonly open: { seq: number; delivery: Delivery }[] = [];
  private seq = 0;

  constructor(private readonly retry: boolean) {
    this.tracker = new CommitTracker(retry);
    this.rejoin(Array.from({ length: PARTITIONS }, () => true));
  }

  run(op: Op): void {
    switch (op.kind) {
      case 'read':
        return this.read(op.p, op.n);
      case 'decode':
        return this.decode(op.i, op.events);
      case 'ack':
        return this.insight(op.i, false);
      case 'fail':
        return this.insight(op.i, true);
      case 'commit':
        return this.commit(true);
      case 'lose':
        return this.commit(false);
      case 'rejoin':
        return this.rejoin(op.keep);
    }
  }

  /**
   * The end: what is assigned is read to the end and acked, and its commit
   * is refused in a rebalance that assigns everything; then everything is
   * read to the end and acked: the committed offsets must reach the end offsets.
   */
  drain(): void {
    const settleAll = (applied: boolean) => {
      for (let p = 0; p < PARTITIONS; p++) if (this.position.has(p)) this.read(p, LENGTH);
      while (this.undecoded.length > 0) this.decode(0, 1);
      while (this.open.length > 0) this.insight(0, false);
      this.commit(applied);
    };
    settleAll(false);
    this.rejoin(Array.from({ length: PARTITIONS }, () => true));
    settleAll(true);
    expect(this.committed, 'committed offsets at the end').to.deep.equal(Array.from({ length: PARTITIONS }, () => LENGTH));
    expect(this.tracker.unsettled, 'unsettled at the end').to.equal(0);
  }

  private read(p: number, n: number): void {
    const at = this.position.get(p);
    if (at === undefined) {
      // a batch fetched before the rebalance, of a partition now another member's
      expect(this.tracker.received(TOPIC, p, Math.min(this.committed[p], LENGTH - 1)), `p${p} is not assigned: nothing handed over`).to.equal(undefined);
      return;
    }
    const g = this.gen.get(p)!;
    let offset = at;
    for (; offset < Math.min(at + n, LENGTH); offset++) {
      const entry = this.tracker.received(TOPIC, p, offset);
      const times = g.handed.get(offset) ?? 0;
      if (!entry) {
        expect(times, `p${p}/${offset} skipped but never handed over in this generation`).to.be.above(0);
        expect(g.again.has(offset), `p${p}/${offset} skipped though a seek asked for it again`).to.equal(false);
        continue;
      }
      expect(times === 0 || g.again.has(offset), `p${p}/${offset} handed over twice in one generation`).to.equal(true);
      g.again.delete(offset);
      g.handed.set(offset, times + 1);
      const delivery: Delivery = { p, offset, open: 0, ended: false };
      g.latest.set(offset, delivery);
      g.acked.delete(offset);
      this.undecoded.push({ entry, delivery });
    }
    this.position.set(p, offset);
  }

  private decode(i: number, events: number): void {
    if (this.undecoded.length === 0) return;
    const [{ entry, delivery }] = this.undecoded.splice(i % this.undecoded.length, 1);
    const seqs = Array.from({ length: events }, () => ++this.seq);
    this.tracker.decoded(
      entry,
      seqs.map((seq) => ({ uid: 1, seq })),
    );
    delivery.open = events;
    // a message that made no event is settled at once (if its delivery still counts)
    if (events === 0 && this.isCurrent(delivery) && !delivery.ended) this.settle(delivery);
    for (const seq of seqs) this.open.push({ seq, delivery });
  }

  private insight(i: number, failed: boolean): void {
    if (this.open.length === 0) return;
    const [{ seq, delivery }] = this.open.splice(i % this.open.length, 1);
    const counts = this.isCurrent(delivery) && !delivery.ended;
    if (!failed || !this.retry) {
      // without retry a fail gives the event up: it counts as acked
      if (failed) expect(this.tracker.fail(seq), 'no seek without retry').to.equal(undefined);
      else this.tracker.ack(seq);
      if (counts && --delivery.open === 0) this.settle(delivery);
      return;
    }
    const seek = this.tracker.fail(seq);
    if (!counts) {
      expect(seek, `a fail of a delivery that no longer counts (p${delivery.p}/${delivery.offset}) seeks nowhere`).to.equal(undefined);
      return;
    }
    expect(seek).to.deep.equal({ topic: TOPIC, partition: delivery.p, offset: delivery.offset });
    delivery.ended = true;
    // that message and every one after it is read again; what was delivered of them no longer counts
    const g = this.gen.get(delivery.p)!;
    for (const [offset, d] of g.latest) {
      if (offset < delivery.offset) continue;
      d.ended = true;
      g.acked.delete(offset);
      g.again.add(offset);
    }
    // the onramp cannot seek: a fresh stream reads every assigned partition from the broker's committed offset
    for (const p of this.position.keys()) this.position.set(p, this.committed[p]);
  }

  private settle(delivery: Delivery): void {
    delivery.ended = true;
    this.gen.get(delivery.p)!.acked.add(delivery.offset);
  }

  private isCurrent(delivery: Delivery): boolean {
    return this.gen.get(delivery.p)?.latest.get(delivery.offset) === delivery;
  }

  private commit(applied: boolean): void {
    for (const c of this.tracker.takeCommits()) {
      expect(c.topic).to.equal(TOPIC);
      const g = this.gen.get(c.partition);
      expect(g, `a commit of p${c.partition}, not assigned to this member`).to.not.equal(undefined);
      const offset = Number(c.offset);
      expect(offset, `p${c.partition}: the commit goes back`).to.be.at.least(this.committed[c.partition]);
      for (let o = g!.start; o < offset; o++) expect(g!.acked.has(o), `p${c.partition}: commit ${offset} passes ${o}, not acked`).to.equal(true);
      if (applied) this.committed[c.partition] = offset;
    }
  }

  /** A rebalance: `keep[p]` says whether p is assigned to this member now. Every assigned partition is read from the committed offset. */
  private rejoin(keep: boolean[]): void {
    const assigned = keep.flatMap((k, p) => (k ? [p] : []));
    this.tracker.rejoined({ [TOPIC]: assigned });
    this.position.clear();
    for (let p = 0; p < PARTITIONS; p++) {
      if (!keep[p]) {
        this.gen.delete(p);
        continue;
      }
      if (!this.gen.has(p)) this.gen.set(p, { start: this.committed[p], handed: new Map(), again: new Set(), latest: new Map(), acked: new Set() });
      this.position.set(p, this.committed[p]);
    }
  }
}

describe('kafka commit on ack (CommitTracker) against a model: random reads, acks, fails, commits and rejoins', () => {
  it('hands every offset over once per generation unless a seek asks for it, commits only acked prefixes of its own partitions, and reaches the end', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(opArb, { maxLength: 120 }), (retry, ops) => {
        const sim = new Simulation(retry);
        for (const op of ops) sim.run(op);
        sim.drain();
      }),
      { numRuns: 400 },
    );
  });
});
