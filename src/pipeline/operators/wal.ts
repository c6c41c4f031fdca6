import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Observable, Subscriber, Subscription } from '../../core/rx';
import type { EddyEvent, Insight, PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import { checkInstalled } from '../../core/packages';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { nodeUrl, ownSeqs, withError } from './support';
import { LevelWalStorage, deserialiseEvent, serialiseEvent, whenReady, type WalSnapshot, type WalStorage } from './wal-storage';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    read_count: s.integer({ minimum: 1, description: 'stored events emitted per turn before yielding' }),
    dir: s.string({ minLength: 1, description: 'directory of the log; temporary when absent' }),
    max_elements: s.integer({ minimum: 1, description: 'full (breaker triggered) at this many unacknowledged events' }),
    max_bytes: s.integer({ minimum: 1, description: 'full (breaker triggered) at this many bytes of unacknowledged events' }),
    flush_on_event: s.boolean({ default: false, description: 'fsync every write' }),
  },
  {
    description: 'A write-ahead log: stores each event before acknowledging it upstream and replays what is not acknowledged downstream.',
    required: ['read_count'],
    // at least one bound: a log without one would grow without end
    anyOf: [{ required: ['max_elements'] }, { required: ['max_bytes'] }],
  },
);

export type WalConfig = Input<typeof configSchema>;

/** A WAL node; `stop` waits for pending writes and closes the store. */
export interface WalNode extends OperatorNode {
  stop(): Promise<void>;
  /** settles once the stored log has been read (on the first subscription) and its replay has begun, or loading failed */
  readonly loaded: Promise<void>;
}

interface Entry {
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

class WriteAheadLog implements WalNode {
  readonly ports = ['err'];
  /** settled by `load`: when the stored log is restored, or failed to load */
  private readonly loading = Promise.withResolvers<void>();
  readonly loaded = this.loading.promise;
  private readonly from: string;
  private readonly readCount: number;
  /** the stored events not acked yet, by seq, ascending: loaded in order, appended in order */
  private readonly store = new Map<number, Entry>();
  private bytes = 0;
  /** the last seq assigned to an incoming event */
  private lastSeq = 0;
  /** the last seq whose write finished: the read cursor never passes it */
  private writtenSeq = 0;
  /** the next seq to send downstream */
  private readSeq = 1;
  /** the stored log has been read: writes and sends wait for it */
  private ready = false;
  private writing = false;
  /** false while an output has triggered */
  private outputOpen = true;
  private full = false;
  private stopped: Promise<void> | undefined;
  /** events waiting for the write under way to finish; written together */
  private queue: Queued[] = [];
  private subscriber: Subscriber<PortEvent> | undefined;
  private pumpTask: Subscription | undefined;
  /** wakes `stop` once writes are done */
  private idle: (() => void) | undefined;

  constructor(
    private readonly config: WalConfig,
    private readonly ctx: OperatorContext,
    private readonly storage: WalStorage,
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
    }).then(() => this.storage.close());
    return this.stopped;
  }

  private receive(event: EddyEvent): void {
    this.queue.push(this.enqueued(event, ++this.lastSeq));
    this.write();
  }

  private enqueued(original: EddyEvent, seq: number): Queued {
    // the WAL's own id: insights about it come back here; the source was acked already
    const { tracked: _t, opMeta: _o, ...rest } = original;
    const event: EddyEvent = { ...rest, id: { uid: this.ctx.uid, seq }, transactional: true };
    return { original, seq, event, text: serialiseEvent(event) };
  }

  /** Reads the stored log, once, on the first subscription. */
  private load(): void {
    whenReady(
      this.storage.load(),
      (snapshot) => this.restore(snapshot),
      (err) => {
        this.loading.resolve();
        this.fail(err);
      },
    );
  }

  private restore(snapshot: WalSnapshot): void {
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

  private keep(seq: number, event: EddyEvent, text: string): void {
    const size = Buffer.byteLength(text);
    this.store.set(seq, { event, bytes: size });
    this.bytes += size;
  }

  /** Writes what is queued as one batch, unless a write is under way (its end writes the next batch). */
  private write(): void {
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
      whenReady(this.storage.append(entries, this.lastSeq), () => this.written(batch), onError);
    } catch (err) {
      onError(err);
    }
  }

  private written(batch: Queued[]): void {
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
  private writeFailed(batch: Queued[], err: unknown): void {
    this.writing = false;
    const error = `qos::wal node ${this.ctx.nodeId}: write failed: ${err instanceof Error ? err.message : String(err)}`;
    for (const { original } of batch) {
      if (original.transactional) this.ctx.insight({ kind: 'fail', event: original, from: this.from, meta: { error } });
      else this.subscriber?.next({ port: 'err', event: withError(original, error) });
    }
    this.write();
  }

  /** Sends stored events from the read cursor, `read_count` per turn. */
  private pump(): void {
    this.pumpTask = undefined;
    if (this.subscriber === undefined || !this.outputOpen || !this.ready) return;
    let sent = 0;
    while (this.readSeq <= this.writtenSeq && this.outputOpen && this.subscriber !== undefined) {
      if (sent >= this.readCount) {
        // yield, so acks, fails and breaker signals are seen between chunks
        this.pumpTask = this.ctx.scheduler.schedule(() => this.pump());
        return;
      }
      const entry = this.store.get(this.readSeq++);
      if (entry === undefined) continue; // acked already, or never written
      sent++;
      this.subscriber.next({ port: 'out', event: entry.event });
    }
  }

  private schedulePump(): void {
    this.pumpTask ??= this.ctx.scheduler.schedule(() => this.pump());
  }

  /** Downstream acked these: they leave the log. */
  private ack(seqs: number[]): void {
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
  private rewind(seqs: number[]): void {
    const stored = seqs.filter((s) => this.store.has(s));
    if (stored.length === 0) return;
    this.readSeq = Math.min(this.readSeq, ...stored);
    // not from inside the insight call: the replay starts on the next turn
    this.schedulePump();
  }

  private setOutput(open: boolean): void {
    this.outputOpen = open;
    if (open) this.schedulePump();
  }

  /** Triggers the upstream breaker when the log becomes full, restores it when it no longer is. */
  private checkFull(): void {
    const { max_elements, max_bytes } = this.config;
    const now = (max_elements !== undefined && this.store.size >= max_elements) || (max_bytes !== undefined && this.bytes >= max_bytes);
    if (now === this.full) return;
    this.full = now;
    this.ctx.insight({ kind: now ? 'trigger' : 'restore', from: this.from });
  }

  private fail(err: unknown): void {
    this.subscriber?.error(err);
  }
}

const sanitise = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '');

/** What the schema cannot say: a bound is required. (`eddy test` keeps the log in memory: this check alone, no LevelDB.) */
export function checkWalConfig(config: WalConfig, nodeId: string): void {
  if (config.max_elements === undefined && config.max_bytes === undefined) {
    throw invalid(`qos::wal node ${nodeId}: config: one of max_elements and max_bytes is required`);
  }
}

/** qos::wal */
export const wal: OperatorType<WalConfig> = {
  name: 'qos::wal',
  outputPorts: () => ['err'],
  configSchema,
  validate(config, nodeId) {
    checkWalConfig(config, nodeId);
    // the log is a LevelDB store, opened at activation
    checkInstalled('level', `qos::wal node ${nodeId}`);
  },
  create(config, ctx) {
    // one log per pipeline instance and node, so two instances never share a LevelDB lock
    const dir = config.dir !== undefined ? join(config.dir, sanitise(ctx.pipelineUrl), sanitise(ctx.nodeId)) : mkdtempSync(join(tmpdir(), 'eddy-wal-'));
    return walNode(config, ctx, new LevelWalStorage(dir, config.flush_on_event ?? false));
  },
};
