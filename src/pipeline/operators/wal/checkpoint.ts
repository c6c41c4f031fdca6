/**
 * qos::wal with `guarantee: exactly_once` (core/checkpoint.ts,
 * docs/design-exactly-once.md §6): the log is the replayable source of what
 * follows it, as a Kafka topic is for the kafka onramp.
 *
 * Running, it sends stored events downstream; the stateful nodes after it
 * ack an event once they hold it, the file offramps once it is written.
 * Each `commit_interval` it stops sending, waits until every event sent has
 * settled, and writes one checkpoint into its own store, in one atomic
 * batch: how far it has read (the events up to there leave the log in the
 * same batch), what changed in the state of the nodes after it, and how long
 * each file its flow writes is. At the start, and after an event failed, it
 * goes back to the last checkpoint: the state comes back, the files are cut
 * back to their lengths, and the log is read again from there.
 *
 * Upstream of it, a source that gives the same events again after a restart
 * (the file onramp, `EddyEvent.replay`) is counted in the same batches as
 * the events it stored, so what is read again is dropped (counted as the
 * rule `stored before a restart`) instead of stored twice.
 */
import type { Subscription } from '../../../core/rx';
import type { EddyEvent } from '../../../core/event';
import type { CheckpointParts, CheckpointedSink } from '../../../core/checkpoint';
import type { OperatorContext } from '../../operator';
import type { WalConfig } from './config';
import { WriteAheadLog } from './log';
import { stateKey, type CheckpointStorage, type SavedCheckpoint, type WalSnapshot } from './storage';

/** The rule a replayed event that the log stored before is dropped by: counted per node in /metrics. */
export const STORED_BEFORE = 'stored before a restart';

export class CheckpointingLog extends WriteAheadLog {
  private parts: CheckpointParts = { stateful: [], sinks: [] };
  /** `parts.sinks`, each checked to take part in the checkpoints */
  private sinks: readonly { readonly url: string; readonly sink: CheckpointedSink }[] = [];
  /** every event up to this seq is in the last checkpoint */
  private checkpointSeq = 0;
  /** a checkpoint was written before (read at attach): without one, the first is written before the replay */
  private hasCheckpoint = false;
  /** the last seq sent downstream */
  private sentSeq = 0;
  /** sent and not yet acked or failed */
  private readonly inFlight = new Set<number>();
  private settledWaiter: (() => void) | undefined;
  /** why an event failed since the last checkpoint: the flow goes back to it */
  private failure: string | undefined;
  /** no event goes downstream while a checkpoint or a rewind runs */
  private paused = false;
  private timer: Subscription | undefined;
  /** every checkpoint and rewind, one after another */
  private serial: Promise<void> = Promise.resolve();
  /** per replayable source: how many of its events the log holds or has queued (stored with each batch) */
  private readonly origins = new Map<string, number>();
  /** per replayable source: how many it sent in this run */
  private readonly seen = new Map<string, number>();
  /** per replayable source: how many the log had stored before this run (what it sends again is dropped) */
  private skip = new Map<string, number>();
  private readonly interval: number;
  /** the node stops: a checkpoint waiting for events to settle gives up (they may never settle now) */
  private closing = false;

  constructor(
    config: WalConfig,
    ctx: OperatorContext,
    private readonly checkpoints: CheckpointStorage,
    intervalMs: number,
  ) {
    super(config, ctx, checkpoints);
    this.interval = intervalMs;
  }

  /** Restores the nodes after it from the last checkpoint and tells each sink where its output goes on from. */
  async attachCheckpoint(parts: CheckpointParts): Promise<void> {
    const sinks = parts.sinks.map(({ url, type, sink }) => {
      if (!sink) throw new Error(`${url}, a ${type} offramp, cannot take part in its checkpoints (only file offramps can)`);
      return { url, sink };
    });
    this.parts = parts;
    this.sinks = sinks;
    const saved = await this.checkpoints.loadCheckpoint();
    for (const { state } of parts.stateful) state.savedWithSources?.();
    this.restoreState(saved);
    for (const { url, sink } of sinks) sink.resumeAt(saved.exists ? (saved.sinks.get(url) ?? 0) : undefined);
    this.checkpointSeq = saved.seq;
    this.hasCheckpoint = saved.exists;
    this.skip = new Map(saved.origins);
    for (const [origin, n] of saved.origins) this.origins.set(origin, n);
  }

  protected override receive(event: EddyEvent): void {
    const origin = event.replay;
    if (origin !== undefined) {
      const n = (this.seen.get(origin) ?? 0) + 1;
      this.seen.set(origin, n);
      if (n <= (this.skip.get(origin) ?? 0)) {
        // stored before the restart: its effect is in the checkpoint, or still in the log
        if (this.ctx.drop) this.ctx.drop(event, STORED_BEFORE);
        return;
      }
      this.origins.set(origin, n);
    }
    super.receive(event);
  }

  protected override originsToWrite(): ReadonlyMap<string, number> | undefined {
    return this.origins.size > 0 ? new Map(this.origins) : undefined;
  }

  /** After the log is read: the first checkpoint, when there is none (the sinks' lengths to go back to), then replay from the last one. */
  protected override restore(snapshot: WalSnapshot): void {
    this.queue_(async () => {
      if (!this.hasCheckpoint) await this.write_(0, [], []);
      this.hasCheckpoint = true;
      // what a checkpoint covered left the log with it: the replay starts after it
      super.restore({ entries: snapshot.entries.filter(([seq]) => seq > this.checkpointSeq), lastSeq: snapshot.lastSeq });
      this.sentSeq = this.readSeq - 1;
    });
  }

  protected override canSend(): boolean {
    return this.outputOpen && !this.paused;
  }

  protected override sending(seq: number): void {
    this.inFlight.add(seq);
    this.sentSeq = Math.max(this.sentSeq, seq);
    this.timer ??= this.ctx.scheduler.schedule(() => {
      this.timer = undefined;
      this.queue_(() => this.checkpoint());
    }, this.interval);
  }

  /** Acked downstream: the event stays in the log until a checkpoint covers it. */
  protected override ack(seqs: number[]): void {
    for (const seq of seqs) this.inFlight.delete(seq);
    if (this.inFlight.size === 0) this.settledWaiter?.();
  }

  /** Failed downstream: the flow goes back to the last checkpoint at the next one. */
  protected override rewind(seqs: number[]): void {
    if (!seqs.some((seq) => this.inFlight.delete(seq))) return;
    this.failure ??= `event ${seqs.join(', ')} failed`;
    if (this.inFlight.size === 0) this.settledWaiter?.();
  }

  /** A stop after the writes are done: a last checkpoint if everything sent has settled (else the next run goes back to the last one). */
  protected override async beforeClose(): Promise<void> {
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.closing = true;
    this.settledWaiter?.();
    await this.serial;
    if (this.ready && this.inFlight.size === 0 && this.failure === undefined && this.sentSeq > this.checkpointSeq) {
      await this.checkpoint().catch((err: unknown) => this.ctx.logger?.warn(`${this.from}: the last checkpoint failed: ${(err as Error).message}`));
    }
  }

  /** One checkpoint: everything sent settled, then one atomic write; a failure since the last one goes back to it instead. */
  private async checkpoint(): Promise<void> {
    this.paused = true;
    await this.settled();
    // woken by a stop with events unsettled: no checkpoint; the next run goes on from the last one
    if (this.inFlight.size > 0) return;
    if (this.failure !== undefined) return this.goBack(this.failure);
    const upTo = this.sentSeq;
    // the store is in seq order: what was sent comes first
    const removed: number[] = [];
    for (const seq of this.store.keys()) {
      if (seq > upTo) break;
      removed.push(seq);
    }
    const changes: [string, string, string, unknown][] = [];
    for (const { pipeline, node, state } of this.parts.stateful) {
      for (const [partition, entries] of state.takeChanges())
        for (const [key, value] of entries) changes.push([stateKey(pipeline, node), partition, key, value]);
    }
    try {
      await this.write_(upTo, removed, changes);
    } catch (err) {
      // the state's changes were taken: only the last checkpoint says what is saved now
      return this.goBack(`writing a checkpoint failed: ${(err as Error).message}`);
    }
    for (const seq of removed) {
      const entry = this.store.get(seq);
      if (entry === undefined) continue; // read again after the write: gone already (as in ack)
      this.bytes -= entry.bytes;
      this.store.delete(seq);
    }
    this.checkpointSeq = upTo;
    this.resume();
  }

  /** Writes a checkpoint up to `seq` with the sinks' lengths now. */
  private async write_(seq: number, removed: number[], changes: [string, string, string, unknown][]): Promise<void> {
    const sinks = new Map<string, number>();
    for (const { url, sink } of this.sinks) sinks.set(url, await sink.position());
    await this.checkpoints.checkpoint({ seq, removed, sinks, changes });
  }

  /** Back to the last checkpoint: the state from it, the sinks cut back to it, the log read again after it. */
  private async goBack(why: string): Promise<void> {
    this.ctx.logger?.warn(`${this.from}: ${why}: back to the last checkpoint, and on from there`);
    this.failure = undefined;
    this.inFlight.clear();
    const saved = await this.checkpoints.loadCheckpoint();
    for (const { state } of this.parts.stateful) for (const partition of state.partitions()) state.release(partition);
    this.restoreState(saved);
    for (const { url, sink } of this.sinks) await sink.rewind(saved.sinks.get(url) ?? 0);
    this.readSeq = saved.seq + 1;
    this.sentSeq = saved.seq;
    this.resume();
  }

  private restoreState(saved: SavedCheckpoint): void {
    for (const { pipeline, node, state } of this.parts.stateful) {
      for (const [partition, entries] of saved.state.get(stateKey(pipeline, node)) ?? []) state.restore(partition, entries);
    }
  }

  private resume(): void {
    this.paused = false;
    this.checkFull();
    this.schedulePump();
  }

  /** Until every event sent has been acked or failed. */
  private async settled(): Promise<void> {
    if (this.inFlight.size === 0 || this.closing) return;
    await new Promise<void>((resolve) => (this.settledWaiter = resolve));
    this.settledWaiter = undefined;
  }

  /** Runs `work` after every checkpoint or rewind queued before it; a failure stops the node with it. */
  private queue_(work: () => Promise<void>): void {
    this.serial = this.serial.then(work).catch((err: unknown) => this.fail(err));
  }
}
