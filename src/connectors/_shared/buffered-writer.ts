import type { Writable } from 'node:stream';

export interface FullnessWatcher {
  /** the stream's buffer is full: trigger the circuit breaker */
  full(): void;
  /** it has drained: restore it */
  drained(): void;
}

/**
 * What happens to a flush once the stream has written it (its write
 * callback ran): the file offramp fsyncs here. The flush's writes settle when
 * the promise does.
 */
export type AfterWrite = () => Promise<void>;

/** The writes of one event-loop turn: one chunk for the stream, one promise for every write in it. */
interface Flush {
  readonly done: Promise<void>;
  /** the promise's own resolvers: plain functions (properties, not methods) */
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Collects the writes of one event-loop turn and hands them to the stream in
 * one call, instead of one syscall per event. Each `write` returns the
 * promise of its turn's flush, settled in the stream's write callback, that
 * is when the bytes are written (for a file: in the kernel, so they survive
 * the process being killed), not when they are buffered: a sink acks on it.
 *
 * When the stream's buffer is full it tells every watcher (each offramp
 * writing to the stream triggers its own circuit breaker) and again once it
 * has drained.
 */
export class BufferedWriter {
  private chunks: Buffer[] = [];
  private current: Flush | undefined;
  private full = false;
  private readonly watchers = new Set<FullnessWatcher>();
  /** what broke the stream (a reader that went away: EPIPE); every write fails with it from then on */
  private broken: Error | undefined;

  /** `onError` hears once of an error that breaks the stream (a process stream's reader going away must not end the process). */
  constructor(
    private readonly stream: Writable,
    private readonly afterWrite?: AfterWrite,
    onError?: (err: Error) => void,
  ) {
    stream.on('error', (err) => {
      if (this.broken === undefined) onError?.(err);
      this.broken ??= err;
    });
  }

  /** Adds a watcher (told at once if the stream is full now); returns how to remove it. */
  watch(watcher: FullnessWatcher): () => void {
    this.watchers.add(watcher);
    if (this.full) watcher.full();
    return () => this.watchers.delete(watcher);
  }

  /** Queues `chunks`, in order and together, for this turn's flush; the promise settles when the flush has been written (rejects when it failed). */
  write(...chunks: Buffer[]): Promise<void> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    for (const chunk of chunks) this.chunks.push(chunk);
    if (this.current === undefined) {
      this.current = newFlush();
      setImmediate(() => this.flush());
    }
    return this.current.done;
  }

  flush(): void {
    const flush = this.current;
    this.current = undefined;
    if (flush === undefined) return;
    const data = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = [];
    const written = (err?: Error | null) => {
      if (err) return flush.reject(err);
      if (!this.afterWrite) return flush.resolve();
      this.afterWrite().then(flush.resolve, flush.reject);
    };
    if (!this.stream.write(data, written) && !this.full) {
      this.full = true;
      for (const w of this.watchers) w.full();
      this.stream.once('drain', () => {
        this.full = false;
        for (const w of this.watchers) w.drained();
      });
    }
  }

  /** Flushes and, when `end` is true, ends the stream and waits until it is closed. */
  async close(end: boolean): Promise<void> {
    const last = this.current?.done;
    this.flush();
    if (!end) return;
    // the last flush's afterWrite (an fsync) runs before the stream closes its file
    await last?.catch(() => undefined);
    await new Promise<void>((resolve, reject) => {
      this.stream.once('error', reject);
      this.stream.end(() => resolve());
    });
  }
}

function newFlush(): Flush {
  const { promise: done, resolve, reject }: PromiseWithResolvers<void> = Promise.withResolvers();
  // marked as handled: a flush nobody waits for (a closing writer's) must not crash the process when it fails
  done.catch(() => undefined);
  return { done, resolve, reject };
}
