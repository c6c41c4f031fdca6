import type { Writable } from 'node:stream';

export interface FullnessWatcher {
  /** the stream's buffer is full: trigger the circuit breaker */
  full(): void;
  /** it has drained: restore it */
  drained(): void;
}

/**
 * Collects the writes of one event-loop turn and hands them to the stream in
 * one call, instead of one syscall per event. When the stream's buffer is
 * full it tells every watcher (each offramp writing to the stream triggers
 * its own circuit breaker) and again once it has drained.
 */
export class BufferedWriter {
  private chunks: Buffer[] = [];
  private scheduled = false;
  private full = false;
  private readonly watchers = new Set<FullnessWatcher>();

  constructor(private readonly stream: Writable) {}

  /** Adds a watcher (told at once if the stream is full now); returns how to remove it. */
  watch(watcher: FullnessWatcher): () => void {
    this.watchers.add(watcher);
    if (this.full) watcher.full();
    return () => this.watchers.delete(watcher);
  }

  write(chunk: Buffer): void {
    this.chunks.push(chunk);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.chunks.length === 0) return;
    const data = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = [];
    if (!this.stream.write(data) && !this.full) {
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
    this.flush();
    if (!end) return;
    await new Promise<void>((resolve, reject) => {
      this.stream.once('error', reject);
      this.stream.end(() => resolve());
    });
  }
}
