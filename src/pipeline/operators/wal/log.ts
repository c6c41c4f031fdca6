import { Observable, Subscriber, Subscription } from '../../../core/rx';
import type { EddyEvent, Insight, PortEvent } from '../../../core/event';
import type { OperatorContext, OperatorNode } from '../../operator';
import { nodeUrl, ownSeqs, withError } from '../_shared/support';
import { deserialiseEvent, serialiseEvent, whenReady, type WalSnapshot, type WalStorage } from './storage';
import type { WalConfig } from './config';

/** A WAL node; `stop` waits for pending writes and closes the store. */
export interface WalNode extends OperatorNode {
  stop(): Promise<void>;
  /** settles once the stored log has been read (on the first subscription) and its replay has begun, or loading failed */
  readonly loaded: Promise<void>;
}

export interface Entry {
  event: EddyEvent;
  bytes: number;
}

/** An incoming event on its way to the log: as it came, its seq, as stored, and as serialised. */
interface Queued {
  original: EddyEvent;
  seq: number;
  event: EddyEvent;
  text: string;
}

/**
 * A write-ahead log. Each incoming event is persisted first; once it is on
 * disk the source gets its ack (the WAL now owns the event) and the event goes
 * downstream with an id of the WAL's own (uid, seq), transactional. A
 * downstream ack deletes it; a fail rewinds the read cursor to it, so it and
 * everything after it are sent again. After a restart everything not yet
 * acked is replayed. The WAL answers for the events it stored, so it swallows
 * insights about them, and breaker signals from its outputs (it buffers
 * instead); insights about other events pass untouched. A write that fails
 * acks nothing: it fails its transactional events back to their sources and
 * sends the others to `err`, and the log carries on. When it holds
 * `max_elements` events or `max_bytes` bytes it triggers the upstream breaker,
 * and restores it once acks have drained it below both.
 */
export function walNode(config: WalConfig, ctx: OperatorContext, storage: WalStorage): WalNode {
  return new WriteAheadLog(config, ctx, storage);
}

export class WriteAheadLog implements WalNode {
  readonly ports = ['err'];
  /** settled by `load`: when the stored log is restored, or failed to load */
  protected readonly loading: PromiseWithResolvers<void> = Promise.withResolvers();
  readonly loaded = this.loading.promise;
  protected readonly from: string;
  protected readonly readCount: number;
  /** the stored events not acked yet, by seq, ascending: loaded in order, appended in order */
  protected readonly store = new Map<number, Entry>();
  protected bytes = 0;
  /** the last seq assigned to an incoming event */
  protected lastSeq = 0;
  /** the last seq whose write finished: the read cursor never passes it */
  protected writtenSeq = 0;
  /** the next seq to send downstream */
  protected readSeq = 1;
  /** the stored log has been read: writes and sends wait for it */
  protected ready = false;
  protected writing = false;
  /** false while an output has triggered */
  protected outputOpen = true;
  protected full = false;
  protected stopped: Promise<void> | undefined;
  /** events waiting for the write under way to finish; written together */
  protected queue: Queued[] = [];
  protected subscriber: Subscriber<PortEvent> | undefined;
  protected pumpTask: Subscription | undefined;
  /** wakes `stop` once writes are done */
  protected idle: (() => void) | undefined;

  constructor(
    protected readonly config: WalConfig,
    protected readonly ctx: OperatorContext,
    protected readonly storage: WalStorage,
  ) {
    this.from = nodeUrl(ctx);
    this.readCount = Math.max(1, config.read_count);
  }

  apply(input: Observable<EddyEvent>): Observable<PortEvent> {
    return new Observable<PortEvent>((sub) => {
      this.subscriber = sub;
      const inputSub = input.subscribe({
        next: (event) => this.receive(event),
        error: (err: unknown) => sub.error(err),
        // the log outlives its input: completing would end replay, so only teardown ends it
        complete: () => undefined,
      });
      if (!this.ready && this.stopped === undefined) this.load();
      return () => {
        this.subscriber = undefined;
        inputSub.unsubscribe();
        this.pumpTask?.unsubscribe();
        this.pumpTask = undefined;
        void this.stop().catch(() => undefined);
      };
    });
  }

  onInsight(insight: Insight): Insight | null {
    const seqs = ownSeqs(insight, this.ctx.uid);
    if (seqs.length === 0) {
      // an output's breaker: the WAL buffers instead of pausing the sources
      if (insight.event === undefined && (insight.kind === 'trigger' || insight.kind === 'restore')) {
        this.setOutput(insight.kind === 'restore');
        return null;
      }
      return insight;
    }
    switch (insight.kind) {
      case 'ack':
        this.ack(seqs);
        break;
      case 'fail':
        this.rewind(seqs);
        break;
      default:
        this.setOutput(insight.kind === 'restore');
    }
    return null;
  }

  /** Waits for pending writes, then closes the store; once, however often it is called. */
  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      if (!this.writing && this.queue.length === 0) resolve();
      else this.idle = resolve;
    })
      .then(() => this.beforeClose())
      .then(() => this.storage.close());
    return this.stopped;
  }

  /** What a subclass does once the writes are done and before the store closes (a last checkpoint). */
  protected async beforeClose(): Promise<void> {
    // nothing by default
  }

  protected receive(event: EddyEvent): void {
    this.queue.push(this.enqueued(event, ++this.lastSeq));
    this.write();
  }

  protected enqueued(original: EddyEvent, seq: number): Queued {
    // the WAL's own id: insights about it come back here; the source was acked already
    const { tracked: _t, opMeta: _o, ...rest } = original;
    const event: EddyEvent = { ...rest, id: { uid: this.ctx.uid, seq }, transactional: true };
    return { original, seq, event, text: serialiseEvent(event) };
  }

  /** Reads the stored log, once, on the first subscription. */
  protected load(): void {
    whenReady(
      this.storage.load(),
      (snapshot) => this.restore(snapshot),
      (err) => {
        this.loading.resolve();
        this.fail(err);
      },
    );
  }

  protected restore(snapshot: WalSnapshot): void {
    for (const [seq, text] of snapshot.entries) this.keep(seq, deserialiseEvent(text), text);
    // writes queued while loading got provisional seqs; renumber them after the stored ones
    const base = snapshot.lastSeq;
    this.queue = this.queue.map((q, i) => this.enqueued(q.original, base + i + 1));
    this.lastSeq = base + this.queue.length;
    this.writtenSeq = base;
    this.readSeq = snapshot.entries.length > 0 ? snapshot.entries[0][0] : base + 1;
    this.ready = true;
    this.checkFull();
    this.pump(); // replay what was not acked before the restart
    this.write();
    this.loading.resolve();
  }

  protected keep(seq: number, event: EddyEvent, text: string): void {
    const size = Buffer.byteLength(text);
    this.store.set(seq, { event, bytes: size });
    this.bytes += size;
  }

  /** Writes what is queued as one batch, unless a write is under way (its end writes the next batch). */
  protected write(): void {
    if (this.writing || !this.ready || this.queue.length === 0) {
      if (!this.writing && this.queue.length === 0) this.idle?.();
      return;
    }
    this.writing = true;
    const batch = this.queue;
    this.queue = [];
    const onError = (err: unknown) => this.writeFailed(batch, err);
    try {
      const entries = batch.map(({ seq, text }): [number, string] => [seq, text]);
      whenReady(this.storage.append(entries, this.lastSeq, this.originsToWrite()), () => this.written(batch), onError);
    } catch (err) {
      onError(err);
    }
  }

  /** Stored with each batch: nothing here; a checkpointing WAL's counts of its replayable sources. */
  protected originsToWrite(): ReadonlyMap<string, number> | undefined {
    return undefined;
  }

  protected written(batch: Queued[]): void {
    this.writing = false;
    this.writtenSeq = batch[batch.length - 1].seq; // batches finish in seq order
    for (const { original, seq, event, text } of batch) {
      this.keep(seq, event, text);
      if (original.transactional) this.ctx.insight({ kind: 'ack', event: original, from: this.from });
    }
    this.checkFull();
    this.pump();
    this.write();
  }

  /**
   * Not stored, so never acked: a transactional source gets a fail and sends
   * the event again; any other event leaves on `err`, the only way it is not
   * lost in silence. The log goes on with the next events (a full disk may
   * have room again); their seqs are new, and the failed ones stay unused.
   */
  protected writeFailed(batch: Queued[], err: unknown): void {
    this.writing = false;
    const error = `qos::wal node ${this.ctx.nodeId}: write failed: ${err instanceof Error ? err.message : String(err)}`;
    for (const { original } of batch) {
      if (original.transactional) this.ctx.insight({ kind: 'fail', event: original, from: this.from, meta: { error } });
      else this.subscriber?.next({ port: 'err', event: withError(original, error) });
    }
    this.write();
  }

  /** Sends stored events from the read cursor, `read_count` per turn. */
  protected pump(): void {
    this.pumpTask = undefined;
    if (this.subscriber === undefined || !this.canSend() || !this.ready) return;
    let sent = 0;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- subscriber.next() below may unsubscribe at once, which clears it
    while (this.readSeq <= this.writtenSeq && this.canSend() && this.subscriber !== undefined) {
      if (sent >= this.readCount) {
        // yield, so acks, fails and breaker signals are seen between chunks
        this.pumpTask = this.ctx.scheduler.schedule(() => this.pump());
        return;
      }
      const entry = this.store.get(this.readSeq++);
      if (entry === undefined) continue; // acked already, or never written
      sent++;
      this.sending(this.readSeq - 1);
      this.subscriber.next({ port: 'out', event: entry.event });
    }
  }

  /** Whether stored events may go downstream now: not while an output's breaker is triggered. */
  protected canSend(): boolean {
    return this.outputOpen;
  }

  /** The stored event `seq` goes downstream now (a checkpointing WAL waits for it to settle). */
  protected sending(_seq: number): void {
    // nothing by default
  }

  protected schedulePump(): void {
    this.pumpTask ??= this.ctx.scheduler.schedule(() => this.pump());
  }

  /** Downstream acked these: they leave the log. */
  protected ack(seqs: number[]): void {
    const gone: number[] = [];
    for (const seq of seqs) {
      const entry = this.store.get(seq);
      if (entry === undefined) continue;
      this.store.delete(seq);
      this.bytes -= entry.bytes;
      gone.push(seq);
    }
    if (gone.length === 0) return;
    try {
      whenReady(
        this.storage.remove(gone),
        () => undefined,
        (err) => this.fail(err),
      );
    } catch (err) {
      this.fail(err);
    }
    this.checkFull();
  }

  /** Downstream failed these: they and everything after them are sent again. */
  protected rewind(seqs: number[]): void {
    const stored = seqs.filter((s) => this.store.has(s));
    if (stored.length === 0) return;
    this.readSeq = Math.min(this.readSeq, ...stored);
    // not from inside the insight call: the replay starts on the next turn
    this.schedulePump();
  }

  protected setOutput(open: boolean): void {
    this.outputOpen = open;
    if (open) this.schedulePump();
  }

  /** Triggers the upstream breaker when the log becomes full, restores it when it no longer is. */
  protected checkFull(): void {
    const { max_elements, max_bytes } = this.config;
    const now = (max_elements !== undefined && this.store.size >= max_elements) || (max_bytes !== undefined && this.bytes >= max_bytes);
    if (now === this.full) return;
    this.full = now;
    this.ctx.insight({ kind: now ? 'trigger' : 'restore', from: this.from });
  }

  protected fail(err: unknown): void {
    this.subscriber?.error(err);
  }
}
