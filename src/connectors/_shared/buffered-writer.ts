import type { Writable } from 'node:stream';

/**
 * Collects the writes of one event-loop turn and hands them to the stream in
 * one call, instead of one syscall per event. When the stream's buffer is
 * full it calls `onFull` (the offramp triggers the circuit breaker) and
 * `onDrain` once it has drained.
 */
export class BufferedWriter {
  private chunks: Buffer[] = [];
  private scheduled = false;
  private full = false;

  constructor(
    private readonly stream: Writable,
    private readonly onFull: () => void = () => undefined,
    private readonly onDrain: () => void = () => undefined,
  ) {}

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
      this.onFull();
      this.stream.once('drain', () => {
        this.full = false;
        this.onDrain();
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
