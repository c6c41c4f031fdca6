/**
 * percentile(x, q): the nearest-rank percentile from a log-linear histogram.
 *
 * The buckets are HDR histogram's layout (each power of two split into 2^10
 * equal sub-buckets, what 3 significant digits give there) but keyed
 * directly on a double's bits: its exponent and the top 10 bits of its
 * mantissa. So every finite double has a bucket, of either sign and any
 * magnitude, without a scale to choose and no range to fall out of (why not
 * hdr-histogram-js itself: it takes integers in [1, 2^53) only, so fractional
 * milliseconds or 0.000123 s would need a fixed scale that rounds small values
 * away or caps large ones). A bucket spans at most 2^-10 of its lower bound,
 * and its midpoint is within 2^-11 (0.049 %) of anything in it. Histograms
 * merge by adding counts.
 */
import type { Accumulator, AggregateFunction } from './functions';
import { checkConstantCount, constantLabel, mergeable, numberConstant, numericDouble } from './values';

/** mantissa bits kept per bucket */
const SUB_BUCKET_BITS = 10;
/** the relative error bound of a result: half a bucket's relative width */
export const PERCENTILE_RELATIVE_ERROR = 2 ** -(SUB_BUCKET_BITS + 1);
const SHIFT = 20 - SUB_BUCKET_BITS; // the high word of a double holds sign, 11 exponent bits and 20 mantissa bits

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0; // little-endian: the high word is second

/** The bucket of a non-zero finite double: 1, 2, … for positive values in order, -1, -2, … for negative ones. */
function bucketOf(x: number): number {
  f64[0] = x;
  const high = u32[HIGH];
  const key = ((high & 0x7fffffff) >>> SHIFT) + 1;
  return high >>> 31 === 0 ? key : -key;
}

/** The smallest magnitude in bucket `key` (> 0). */
function lowerBound(key: number): number {
  u32[HIGH] = (key - 1) << SHIFT;
  u32[1 - HIGH] = 0;
  return f64[0];
}

/** The smallest k with at least q·n values at or below the k-th (1-based), q·n within a few ulps of an integer counting as that integer (0.99 · 100 is 99). */
export function nearestRank(q: number, n: number): number {
  const t = q * n;
  return Math.min(n, Math.max(1, Math.ceil(t - t * 4 * Number.EPSILON)));
}

/** A histogram of doubles with a 2^-11 relative error bound; exact minimum and maximum. */
export class RelativeHistogram {
  readonly counts = new Map<number, number>();
  zeros = 0;
  n = 0;
  min = Infinity;
  max = -Infinity;
  /** every value so far was an integer: buckets narrower than 1 then answer their exact lower bound */
  integers = true;
  private sorted: number[] | undefined;

  record(value: number): void {
    const x = value === 0 ? 0 : value; // -0 is 0
    this.n++;
    if (x < this.min) this.min = x;
    if (x > this.max) this.max = x;
    if (this.integers && !Number.isInteger(x)) this.integers = false;
    if (x === 0) return void this.zeros++;
    const key = bucketOf(x);
    const c = this.counts.get(key);
    if (c === undefined) {
      this.counts.set(key, 1);
      this.sorted = undefined;
    } else this.counts.set(key, c + 1);
  }

  /** The value at nearest rank `rank` (1..n), within the error bound, never outside [min, max]. */
  valueAtRank(rank: number): number {
    if (rank <= 1) return this.min;
    if (rank >= this.n) return this.max;
    this.sorted ??= [...this.counts.keys()].sort((a, b) => a - b);
    let seen = 0;
    let zerosDone = false;
    for (const key of this.sorted) {
      if (key > 0 && !zerosDone) {
        zerosDone = true;
        seen += this.zeros;
        if (seen >= rank) return 0;
      }
      seen += this.counts.get(key) ?? 0;
      if (seen >= rank) return Math.min(this.max, Math.max(this.min, this.representative(key)));
    }
    return this.zeros > 0 && !zerosDone ? 0 : this.max;
  }

  /** The midpoint of a bucket, or its exact lower bound when that is the one integer it can hold. */
  private representative(key: number): number {
    const k = Math.abs(key);
    const low = lowerBound(k);
    const high = lowerBound(k + 1); // Infinity past the largest double: min/max clamp it
    const value = this.integers && high - low <= 1 ? low : low + (high - low) / 2;
    return key > 0 ? value : -value;
  }

  add(other: RelativeHistogram): void {
    for (const [key, c] of other.counts) {
      const mine = this.counts.get(key);
      if (mine === undefined) this.sorted = undefined;
      this.counts.set(key, (mine ?? 0) + c);
    }
    this.zeros += other.zeros;
    this.n += other.n;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
    this.integers &&= other.integers;
  }
}

class Percentile implements Accumulator {
  readonly histogram = new RelativeHistogram();
  constructor(private readonly q: number) {}

  add(values: readonly unknown[]): void {
    this.histogram.record(numericDouble('percentile', values[0]));
  }

  result(): number | null {
    const h = this.histogram;
    return h.n === 0 ? null : h.valueAtRank(nearestRank(this.q, h.n));
  }

  merge(other: Accumulator): void {
    this.histogram.add(mergeable('percentile', Percentile, other).histogram);
  }
}

const CONSTANTS = ['q'];

export const percentile: AggregateFunction = {
  name: 'percentile',
  eventArgs: 1,
  constants: CONSTANTS,
  description:
    'the nearest-rank q-quantile (0 <= q <= 1; 0 is the minimum, 1 the maximum, both exact) as a double, within 0.049 % (2^-11) of the true value; integers below 2048 exact; null when empty',
  prepare(constants) {
    checkConstantCount('percentile', 1, CONSTANTS, 0, constants);
    const q = numberConstant('percentile', constantLabel(1, CONSTANTS, 0), constants[0], 0, 1);
    return () => new Percentile(q);
  },
};
