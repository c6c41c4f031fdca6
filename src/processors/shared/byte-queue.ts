/**
 * Bytes received but not yet framed. Chunks are kept as they came and joined
 * only when a frame is taken, so a large frame arriving in many small reads
 * costs one copy, not one per read.
 */
export class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The first `n` bytes (n <= length), without taking them. */
  peek(n: number): Buffer {
    this.gather(n);
    return this.chunks[0].subarray(0, n);
  }

  /** Byte at `index` (< length). */
  byteAt(index: number): number {
    for (const chunk of this.chunks) {
      if (index < chunk.length) return chunk[index];
      index -= chunk.length;
    }
    throw new RangeError('ByteQueue: index past the end');
  }

  /** Takes the first `n` bytes (n <= length). The result is a copy or a view of a chunk the queue no longer holds. */
  take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    this.gather(n);
    const head = this.chunks[0];
    const taken = head.subarray(0, n);
    if (n === head.length) this.chunks.shift();
    else this.chunks[0] = head.subarray(n);
    this.length -= n;
    return taken;
  }

  clear(): void {
    this.chunks = [];
    this.length = 0;
  }

  /** Joins chunks until the first holds at least `n` bytes. */
  private gather(n: number): void {
    if (this.chunks[0].length >= n) return;
    let count = 0;
    let size = 0;
    while (size < n) size += this.chunks[count++].length;
    this.chunks.splice(0, count, Buffer.concat(this.chunks.slice(0, count), size));
  }
}
