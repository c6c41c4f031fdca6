import type { EventId } from '../../core/event';

/** One message handed to the machinery, until every event made from it is settled. */
export interface Entry {
  readonly offset: number;
  /** every event made from it was acked (or failed, when failed events are not retried), or it made none */
  settled: boolean;
  /** dropped (sought past, or the partition was reassigned): what happens to its events no longer counts */
  stale: boolean;
  readonly track: PartitionTrack;
  /** its events not acked yet (0 before it is decoded, and once it is settled or dropped) */
  open: number;
  /** the sequence number of its first event (-1: not decoded, or it made none) */
  seq: number;
  /** the sequence numbers of its other events, when it made more than one */
  more: readonly number[] | undefined;
}

interface PartitionTrack {
  readonly topic: string;
  readonly partition: number;
  /** entries in offset order; those before `head` are settled */
  entries: Entry[];
  head: number;
  /** the offset to commit next (one past the last of the settled prefix); undefined before the first */
  committable: number | undefined;
  dirty: boolean;
  /** the leader epoch of the partition's last message, sent with its commit (KIP-320) */
  leaderEpoch: number;
  /**
   * the highest offset handed over that still counts (-1: none): a message
   * at or below it is in flight or acked already, so when the consumer reads
   * it again (after a rejoin that kept the partition, or a restart) it is
   * not handed over a second time. A seek lowers it below the sought offset.
   */
  delivered: number;
}

export interface Seek {
  topic: string;
  partition: number;
  offset: number;
}

/** What the client's `commit` takes. */
export interface CommitOffset {
  topic: string;
  partition: number;
  offset: bigint;
  leaderEpoch: number;
}

/**
 * Commit-on-ack bookkeeping for a consumer with `enable.auto.commit: false`.
 *
 * Per partition it keeps the messages handed over in offset order; an offset
 * becomes committable only when every message up to it is settled, i.e.
 * every event made from it was acked. A message that made no event (it went
 * to `err`, or the codec found nothing in it) is settled at once. So a crash
 * at any moment re-reads from the first message whose events were not all
 * delivered: at least once, never a gap.
 *
 * A fail with `retry` returns where to seek: that message and everything
 * after it on its partition are dropped (their late acks no longer count)
 * and will be read again. Without `retry` a failed event counts as settled:
 * it is given up, and the committed position moves past it once everything
 * before it is settled too.
 *
 * A (re)join of the group keeps the partitions still assigned to this
 * member, with their messages in flight: the onramp reads them again from
 * the committed offset, and what was handed over already (in flight, or
 * acked and not committed yet) is skipped, so no event is delivered twice
 * because of a rebalance. The partitions assigned elsewhere are dropped:
 * another member reads them from the committed offset, and the late acks of
 * their messages here must not commit (the broker would take such a commit
 * over the new owner's).
 */
export class CommitTracker {
  private readonly tracks = new Map<string, PartitionTrack>();
  /** the partitions of the last (re)join; undefined before the first */
  private assigned: Set<string> | undefined;
  /**
   * per topic, the partitions' tracks by partition number: found without building a key per message. Every track
   * here is of an assigned partition (a rejoin deletes the others)
   */
  private readonly byTopic = new Map<string, (PartitionTrack | undefined)[]>();
  /**
   * the entries decoded and not settled yet, by the sequence numbers of their events not acked yet. The settlement
   * rules are those of `Settlements` (_shared/settlement.ts), kept here on the entry itself: one map entry per event
   * rather than two per message and a delivery object, on the hot path of every message
   */
  private readonly bySeq = new Map<number, Entry>();
  private unsettledCount = 0;

  constructor(private readonly retry: boolean) {}

  /** messages handed over whose events are not all settled yet */
  get unsettled(): number {
    return this.unsettledCount;
  }

  /**
   * A message was read. Returns its entry when it is to be handed to the
   * machinery; undefined when it must not be: it was handed over already and
   * still counts (read again after a rejoin or a restart), or its partition
   * is not assigned to this member (a batch fetched before the rebalance).
   */
  received(topic: string, partition: number, offset: number, leaderEpoch = -1): Entry | undefined {
    const track = this.byTopic.get(topic)?.[partition] ?? this.newTrack(topic, partition, leaderEpoch);
    if (!track || offset <= track.delivered) return undefined;
    track.delivered = offset;
    track.leaderEpoch = leaderEpoch;
    const entry: Entry = { offset, settled: false, stale: false, track, open: 0, seq: -1, more: undefined };
    track.entries.push(entry);
    this.unsettledCount++;
    return entry;
  }

  /** The first time a partition is met: its track, or undefined when it is not assigned to this member. */
  private newTrack(topic: string, partition: number, leaderEpoch: number): PartitionTrack | undefined {
    const key = trackKey(topic, partition);
    if (this.assigned && !this.assigned.has(key)) return undefined;
    const track: PartitionTrack = { topic, partition, entries: [], head: 0, committable: undefined, dirty: false, leaderEpoch, delivered: -1 };
    this.tracks.set(key, track);
    let perTopic = this.byTopic.get(topic);
    if (!perTopic) this.byTopic.set(topic, (perTopic = []));
    perTopic[partition] = track;
    return track;
  }

  /** The machinery made these events from the entry's message (none: it went to `err`, or held nothing): settled once they are all acked. */
  decoded(entry: Entry, ids: readonly EventId[]): void {
    if (entry.stale) return;
    const n = ids.length;
    if (n === 0) return this.settle(entry);
    entry.open = n;
    entry.seq = ids[0].seq;
    this.bySeq.set(entry.seq, entry);
    if (n > 1) {
      const more: number[] = [];
      for (let i = 1; i < n; i++) {
        more.push(ids[i].seq);
        this.bySeq.set(ids[i].seq, entry);
      }
      entry.more = more;
    }
  }

  /** The first ack or fail of an event settles it; later ones for the same event are ignored. */
  ack(seq: number): void {
    const entry = this.bySeq.get(seq);
    if (entry === undefined) return;
    this.bySeq.delete(seq);
    if (--entry.open > 0) return;
    this.settle(entry);
  }

  /**
   * A failed event: where to seek to read it again (with retry), else undefined. The first fail of a message's events
   * drops it at once (it is read again with all its events); later acks and fails of its events are ignored.
   */
  fail(seq: number): Seek | undefined {
    // without retry the event is given up: for the commit it counts as acked
    if (!this.retry) {
      this.ack(seq);
      return undefined;
    }
    const entry = this.bySeq.get(seq);
    if (entry === undefined) return undefined;
    this.dropFrom(entry.track, entry.offset);
    return { topic: entry.track.topic, partition: entry.track.partition, offset: entry.offset };
  }

  /**
   * The group was (re)joined (a rebalance, or the client restarted) with
   * this assignment, topic to partitions. Kept partitions keep their
   * messages in flight, and their committable offset is committed again (a
   * commit sent during the rebalance may have been refused); the others are
   * forgotten.
   */
  rejoined(assignment: Readonly<Record<string, readonly number[]>>): void {
    this.assigned = new Set(Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => trackKey(topic, p))));
    for (const [key, track] of this.tracks) {
      if (this.assigned.has(key)) {
        if (track.committable !== undefined) track.dirty = true;
        continue;
      }
      this.dropFrom(track, -1);
      this.tracks.delete(key);
      const perTopic = this.byTopic.get(track.topic);
      if (perTopic) perTopic[track.partition] = undefined;
    }
  }

  /** The offsets that moved since the last call, to commit. */
  takeCommits(): CommitOffset[] {
    const out: CommitOffset[] = [];
    for (const track of this.tracks.values()) {
      if (!track.dirty || track.committable === undefined) continue;
      track.dirty = false;
      out.push({ topic: track.topic, partition: track.partition, offset: BigInt(track.committable), leaderEpoch: track.leaderEpoch });
    }
    return out;
  }

  /** A commit of these offsets failed: they go into the next one (unless the partition was given up meanwhile, or moved on). */
  commitFailed(offsets: readonly CommitOffset[]): void {
    for (const o of offsets) {
      const track = this.tracks.get(trackKey(o.topic, o.partition));
      if (track?.committable !== undefined) track.dirty = true;
    }
  }

  /** The oldest unsettled message of each partition, for the stall warning. */
  heads(): { topic: string; partition: number; offset: number }[] {
    const out: { topic: string; partition: number; offset: number }[] = [];
    for (const t of this.tracks.values()) {
      // undefined when every entry is settled
      const head = t.entries.at(t.head);
      if (head) out.push({ topic: t.topic, partition: t.partition, offset: head.offset });
    }
    return out;
  }

  /** All its events acked (or it made none): the committed offset may move past it. */
  private settle(entry: Entry): void {
    entry.open = 0;
    entry.settled = true;
    this.advance(entry.track);
  }

  /** Drops the entries at `offset` and after: their events no longer count, and they are handed over when read again. */
  private dropFrom(track: PartitionTrack, offset: number): void {
    const { entries } = track;
    track.delivered = Math.min(track.delivered, offset - 1);
    let cut = entries.length;
    while (cut > track.head && entries[cut - 1].offset >= offset) cut--;
    for (let i = cut; i < entries.length; i++) {
      const entry = entries[i];
      entry.stale = true;
      this.forget(entry);
      this.unsettledCount--;
    }
    entries.length = cut;
  }

  /** What becomes of a dropped entry's events no longer counts. */
  private forget(entry: Entry): void {
    if (entry.open === 0) return;
    entry.open = 0;
    this.bySeq.delete(entry.seq);
    const { more } = entry;
    if (more) for (const seq of more) this.bySeq.delete(seq);
  }

  /** Moves the committable offset over the settled prefix. */
  private advance(track: PartitionTrack): void {
    const { entries } = track;
    let moved = false;
    while (track.head < entries.length && entries[track.head].settled) {
      track.committable = entries[track.head].offset + 1;
      track.head++;
      this.unsettledCount--;
      moved = true;
    }
    if (!moved) return;
    track.dirty = true;
    // drop the settled prefix now and then, so the array does not grow with the partition
    if (track.head > 1024 && track.head * 2 > entries.length) {
      track.entries = entries.slice(track.head);
      track.head = 0;
    }
  }
}

function trackKey(topic: string, partition: number): string {
  return `${topic}\0${partition}`;
}
