import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Observable, Subscriber, Subscription } from '../../core/rx';
import type { EddyEvent, Insight, PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { nodeUrl, ownSeqs, withError } from './support';
import { LevelWalStorage, deserialiseEvent, serialiseEvent, whenReady, type WalStorage } from './wal-storage';
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
  const from = nodeUrl(ctx);
  const readCount = Math.max(1, config.read_count);
  const store = new Map<number, Entry>(); // ascending seq: loaded in order, appended in order
  let bytes = 0;
  let lastSeq = 0; // the last seq assigned to an incoming event
  let writtenSeq = 0; // the last seq whose write finished: the read cursor never passes it
  let readSeq = 1; // the next seq to send downstream
  let loaded = false;
  let writing = false;
  let outputOpen = true; // false while an output has triggered
  let full = false;
  let stopped: Promise<void> | undefined;
  let queue: Array<{ original: EddyEvent; seq: number; event: EddyEvent; text: string }> = [];
  let subscriber: Subscriber<PortEvent> | undefined;
  let pumpTask: Subscription | undefined;
  let idle: (() => void) | undefined; // wakes `stop` once writes are done
  let settleLoad!: () => void;
  const loadSettled = new Promise<void>((resolve) => (settleLoad = resolve));

  const isFull = () =>
    (config.max_elements !== undefined && store.size >= config.max_elements) || (config.max_bytes !== undefined && bytes >= config.max_bytes);
  const checkFull = () => {
    const now = isFull();
    if (now === full) return;
    full = now;
    ctx.insight({ kind: full ? 'trigger' : 'restore', from });
  };

  const toStored = (original: EddyEvent, seq: number): EddyEvent => {
    // the WAL's own id: insights about it come back here; the source was acked already
    const { tracked: _t, opMeta: _o, ...rest } = original;
    return { ...rest, id: { uid: ctx.uid, seq }, transactional: true };
  };

  const enqueued = (original: EddyEvent, seq: number) => {
    const event = toStored(original, seq);
    return { original, seq, event, text: serialiseEvent(event) };
  };

  /** Sends stored events from the read cursor, `read_count` per turn. */
  const pump = () => {
    pumpTask = undefined;
    if (subscriber === undefined || !outputOpen || !loaded) return;
    let sent = 0;
    while (readSeq <= writtenSeq && outputOpen && subscriber !== undefined) {
      if (sent >= readCount) {
        // yield, so acks, fails and breaker signals are seen between chunks
        pumpTask = ctx.scheduler.schedule(pump);
        return;
      }
      const entry = store.get(readSeq++);
      if (entry === undefined) continue; // acked already, or never written
      sent++;
      subscriber.next({ port: 'out', event: entry.event });
    }
  };
  const schedulePump = () => {
    if (pumpTask === undefined) pumpTask = ctx.scheduler.schedule(pump);
  };

  const fail = (err: unknown) => subscriber?.error(err);

  const write = () => {
    if (writing || !loaded || queue.length === 0) {
      if (!writing && queue.length === 0) idle?.();
      return;
    }
    writing = true;
    const batch = queue;
    queue = [];
    const onDone = () => {
      writing = false;
      writtenSeq = batch[batch.length - 1].seq; // batches finish in seq order
      for (const { original, seq, event, text } of batch) {
        const size = Buffer.byteLength(text);
        store.set(seq, { event, bytes: size });
        bytes += size;
        if (original.transactional) ctx.insight({ kind: 'ack', event: original, from });
      }
      checkFull();
      pump();
      write();
    };
    const onError = (err: unknown) => {
      writing = false;
      // Not stored, so never acked: a transactional source gets a fail and sends the event
      // again; any other event leaves on `err`, the only way it is not lost in silence. The
      // log goes on with the next events (a full disk may have room again); their seqs are
      // new, and the failed ones stay unused.
      const error = `qos::wal node ${ctx.nodeId}: write failed: ${err instanceof Error ? err.message : String(err)}`;
      for (const { original } of batch) {
        if (original.transactional) ctx.insight({ kind: 'fail', event: original, from, meta: { error } });
        else subscriber?.next({ port: 'err', event: withError(original, error) });
      }
      write();
    };
    try {
      whenReady(storage.append(batch.map(({ seq, text }) => [seq, text]), lastSeq), onDone, onError);
    } catch (err) {
      onError(err);
    }
  };

  const load = () => {
    whenReady(
      storage.load(),
      (snapshot) => {
        for (const [seq, text] of snapshot.entries) {
          const size = Buffer.byteLength(text);
          store.set(seq, { event: deserialiseEvent(text), bytes: size });
          bytes += size;
        }
        // writes queued while loading got provisional seqs; renumber them after the stored ones
        const base = snapshot.lastSeq;
        queue = queue.map((q, i) => enqueued(q.original, base + i + 1));
        lastSeq = base + queue.length;
        writtenSeq = base;
        readSeq = snapshot.entries.length > 0 ? snapshot.entries[0][0] : base + 1;
        loaded = true;
        checkFull();
        pump(); // replay what was not acked before the restart
        write();
        settleLoad();
      },
      (err) => {
        settleLoad();
        fail(err);
      },
    );
  };

  const ack = (seqs: number[]) => {
    const gone: number[] = [];
    for (const seq of seqs) {
      const entry = store.get(seq);
      if (entry === undefined) continue;
      store.delete(seq);
      bytes -= entry.bytes;
      gone.push(seq);
    }
    if (gone.length === 0) return;
    try {
      whenReady(storage.remove(gone), () => undefined, fail);
    } catch (err) {
      fail(err);
    }
    checkFull();
  };

  const rewind = (seqs: number[]) => {
    const stored = seqs.filter((s) => store.has(s));
    if (stored.length === 0) return;
    readSeq = Math.min(readSeq, ...stored);
    // not from inside the insight call: the replay starts on the next turn
    schedulePump();
  };

  const setOutput = (open: boolean) => {
    outputOpen = open;
    if (open) schedulePump();
  };

  return {
    ports: ['err'],
    apply: (input) =>
      new Observable<PortEvent>((sub) => {
        subscriber = sub;
        const inputSub = input.subscribe({
          next: (event) => {
            const seq = ++lastSeq;
            queue.push(enqueued(event, seq));
            write();
          },
          error: (err: unknown) => sub.error(err),
          // the log outlives its input: completing would end replay, so only teardown ends it
          complete: () => undefined,
        });
        if (!loaded && stopped === undefined) load();
        return () => {
          subscriber = undefined;
          inputSub.unsubscribe();
          pumpTask?.unsubscribe();
          pumpTask = undefined;
          void stop().catch(() => undefined);
        };
      }),
    onInsight(insight: Insight): Insight | null {
      const seqs = ownSeqs(insight, ctx.uid);
      if (seqs.length === 0) {
        // an output's breaker: the WAL buffers instead of pausing the sources
        if (insight.event === undefined && (insight.kind === 'trigger' || insight.kind === 'restore')) {
          setOutput(insight.kind === 'restore');
          return null;
        }
        return insight;
      }
      switch (insight.kind) {
        case 'ack':
          ack(seqs);
          break;
        case 'fail':
          rewind(seqs);
          break;
        default:
          setOutput(insight.kind === 'restore');
      }
      return null;
    },
    stop: () => stop(),
    loaded: loadSettled,
  };

  function stop(): Promise<void> {
    stopped ??= new Promise<void>((resolve) => {
      if (!writing && queue.length === 0) resolve();
      else idle = resolve;
    }).then(() => storage.close());
    return stopped;
  }
}

const sanitise = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '');

/** qos::wal */
export const wal: OperatorType<WalConfig> = {
  name: 'qos::wal',
  configSchema,
  validate(config, nodeId) {
    if (config.max_elements === undefined && config.max_bytes === undefined) {
      throw invalid(`qos::wal node ${nodeId}: config: one of max_elements and max_bytes is required`);
    }
  },
  create(config, ctx) {
    // one log per pipeline instance and node, so two instances never share a LevelDB lock
    const dir = config.dir !== undefined ? join(config.dir, sanitise(ctx.pipelineUrl), sanitise(ctx.nodeId)) : mkdtempSync(join(tmpdir(), 'eddy-wal-'));
    return walNode(config, ctx, new LevelWalStorage(dir, config.flush_on_event ?? false));
  },
};
