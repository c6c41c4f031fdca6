import type { Histogram } from 'hdr-histogram-js';

/** Latencies from 2^31 ns (about 2 s) up are rare: those go to the histogram directly. */
const LIMIT = 2 ** 31;
/** Beyond this many sub-buckets (4 and 5 significant figures) the local table would be large: record directly. */
const MAX_MAGNITUDE = 10;

/**
 * Counts latencies per bucket of an HDR histogram's resolution, and adds
 * them to the histogram in one call per bucket when asked (`flushInto`).
 * Recording a value in hdr-histogram-js costs a logarithm, a power and a
 * division; here it is a count of leading zeros, a shift and an increment.
 * The histogram ends up exactly as if every value had been recorded on its
 * own: each bucket's count goes to a value of that bucket, and the largest
 * value is recorded as itself, so the maximum is exact too.
 */
export class BucketCounts {
  private readonly magnitude: number;
  private readonly counts: Float64Array | undefined;
  private max = 0;
  private pending = 0;

  constructor(private readonly histogram: Histogram) {
    // values below 2^(magnitude + 1) are exact; above, each power of two holds 2^magnitude buckets
    const subBucketCount = 2 ** Math.ceil(Math.log2(2 * 10 ** histogram.numberOfSignificantValueDigits));
    this.magnitude = Math.log2(subBucketCount) - 1;
    this.counts = this.magnitude <= MAX_MAGNITUDE ? new Float64Array((32 - this.magnitude) << (this.magnitude + 1)) : undefined;
  }

  /** One latency, a positive integer of nanoseconds. */
  record(value: number): void {
    if (this.counts === undefined || value >= LIMIT) return this.histogram.recordValue(value);
    const shift = Math.max(0, 31 - Math.clz32(value) - this.magnitude);
    this.counts[(shift << (this.magnitude + 1)) + (value >>> shift)]++;
    if (value > this.max) this.max = value;
    this.pending++;
  }

  /** Adds what was counted to the histogram and starts again. */
  flushInto(): void {
    const counts = this.counts;
    if (counts === undefined || this.pending === 0) return;
    const width = this.magnitude + 1;
    for (let key = 0; key < counts.length; key++) {
      let count = counts[key];
      if (count === 0) continue;
      counts[key] = 0;
      const shift = key >>> width;
      const low = (key - (shift << width)) * 2 ** shift;
      if (this.max >= low && this.max < low + 2 ** shift) {
        this.histogram.recordValue(this.max); // the largest value as itself: the same bucket, an exact maximum
        count--;
      }
      if (count > 0) this.histogram.recordValueWithCount(low, count);
    }
    this.max = 0;
    this.pending = 0;
  }
}
