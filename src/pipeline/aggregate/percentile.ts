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
import type { Accumulator, AggregateFunction } from './function';
import { SnapshotReader, writeDouble } from './snapshot';
import { checkConstantCount, constantLabel, mergeable, numberConstant, numericDouble } from './values';

/** mantissa bits kept per bucket */
const SUB_BUCKET_BITS = 10;
/** the relative error bound of a result: half a bucket's relative width */
export const PERCENTILE_RELATIVE_ERROR = 2 ** -(SUB_BUCKET_BITS + 1);
const SHIFT = 20 - SUB_BUCKET_BITS; // the high word of a double holds sign, 11 exponent bits and 20 mantissa bits

const SUB_BUCKETS = 1 << SUB_BUCKET_BITS;
/** octaves (sign and exponent, the top 12 bits of a double) from here up hold negative values */
const NEGATIVE = 1 << 11;
const MAX_COUNT = 0xffffffff;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0; // little-endian: the high word is second

/** The smallest magnitude of bucket `sub` of octave `octave` (sign ignored); sub may be SUB_BUCKETS, the next octave's first. */
function lowerBound(octave: number, sub: number): number {
  u32[HIGH] = (((octave & (NEGATIVE - 1)) << SUB_BUCKET_BITS) + sub) << SHIFT;
  u32[1 - HIGH] = 0;
  return f64[0];
}

/** The smallest k with at least q·n values at or below the k-th (1-based), q·n within a few ulps of an integer counting as that integer (0.07 · 100 is 7). */
export function nearestRank(q: number, n: number): number {
  const t = q * n;
  return Math.min(n, Math.max(1, Math.ceil(t - t * 4 * Number.EPSILON)));
}

/**
 * A histogram of doubles with a 2^-11 relative error bound; exact minimum
 * and maximum. One page of 1024 counts (4 KB) per octave (power of two)
 * that holds values: latencies from 1 ms to 10 s touch 14 of them.
 */
export class RelativeHistogram {
  /** by octave: the top 12 bits of the double (sign, exponent) */
  readonly octaves = new Map<number, Uint32Array>();
  zeros = 0;
  n = 0;
  min = Infinity;
  max = -Infinity;
  /** every value so far was an integer: buckets narrower than 1 then answer their exact lower bound */
  integers = true;
  // values arrive in runs of one magnitude: the last page found saves a map lookup
  private lastOctave = -1;
  private lastPage: Uint32Array | undefined;

  record(value: number): void {
    const x = value === 0 ? 0 : value; // -0 is 0
    if (x === 0) this.zeros++;
    else {
      f64[0] = x;
      const high = u32[HIGH];
      const page = this.page(high >>> 20);
      const sub = (high >>> SHIFT) & (SUB_BUCKETS - 1);
      if (page[sub] === MAX_COUNT) throw new Error(`percentile: more than ${MAX_COUNT} values in one bucket`);
      page[sub]++;
    }
    this.n++;
    if (x < this.min) this.min = x;
    if (x > this.max) this.max = x;
    if (this.integers && !Number.isInteger(x)) this.integers = false;
  }

  private page(octave: number): Uint32Array {
    const last = this.lastPage;
    if (octave === this.lastOctave && last !== undefined) return last;
    let page = this.octaves.get(octave);
    if (page === undefined) this.octaves.set(octave, (page = new Uint32Array(SUB_BUCKETS)));
    this.lastOctave = octave;
    this.lastPage = page;
    return page;
  }

  /** The value at nearest rank `rank` (1..n), within the error bound, never outside [min, max]. */
  valueAtRank(rank: number): number {
    if (rank <= 1) return this.min;
    if (rank >= this.n) return this.max;
    const pages = [...this.octaves];
    // ascending values: negative octaves from the largest magnitude down, then zero, then positive octaves up
    const negatives = pages.filter(([o]) => o >= NEGATIVE).sort(([a], [b]) => b - a);
    const positives = pages.filter(([o]) => o < NEGATIVE).sort(([a], [b]) => a - b);
    let seen = 0;
    for (const [octave, page] of negatives) {
      for (let sub = SUB_BUCKETS - 1; sub >= 0; sub--) {
        seen += page[sub];
        if (seen >= rank) return this.representative(octave, sub, -1);
      }
    }
    seen += this.zeros;
    if (seen >= rank) return 0;
    for (const [octave, page] of positives) {
      for (let sub = 0; sub < SUB_BUCKETS; sub++) {
        seen += page[sub];
        if (seen >= rank) return this.representative(octave, sub, 1);
      }
    }
    return this.max;
  }

  /** The midpoint of a bucket, or its exact lower bound when that is the one integer it can hold; within [min, max]. */
  private representative(octave: number, sub: number, sign: 1 | -1): number {
    const low = lowerBound(octave, sub);
    const high = lowerBound(octave, sub + 1); // Infinity past the largest double: min/max clamp it
    const value = sign * (this.integers && high - low <= 1 ? low : low + (high - low) / 2);
    return Math.min(this.max, Math.max(this.min, value));
  }

  add(other: RelativeHistogram): void {
    for (const [octave, theirs] of other.octaves) {
      const mine = this.page(octave);
      for (let sub = 0; sub < SUB_BUCKETS; sub++) {
        const c = mine[sub] + theirs[sub];
        if (c > MAX_COUNT) throw new Error(`percentile: more than ${MAX_COUNT} values in one bucket`);
        mine[sub] = c;
      }
    }
    this.zeros += other.zeros;
    this.n += other.n;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
    this.integers &&= other.integers;
  }

  /**
   * `[n, zeros, min, max, integers, pages]`, min and max by `writeDouble`
   * (an empty histogram's are the infinities, and a bigint beyond the double
   * range records as one). `pages` is base64 text of LEB128 varints, each
   * page (in the map's order) as its octave, then tokens covering its 1024
   * buckets in order: an even one 2c a bucket of count c, an odd one 2k - 1 a
   * run of k empty buckets. A few bytes for the usual sparse page, under its
   * 4 KB for a full one.
   */
  snapshot(): unknown[] {
    const bytes: number[] = [];
    for (const [octave, page] of this.octaves) {
      writeVarint(bytes, octave);
      for (let sub = 0; sub < SUB_BUCKETS;) {
        let run = 0;
        while (sub + run < SUB_BUCKETS && page[sub + run] === 0) run++;
        if (run > 0) {
          writeVarint(bytes, 2 * run - 1);
          sub += run;
        } else writeVarint(bytes, 2 * page[sub++]);
      }
    }
    return [this.n, this.zeros, writeDouble(this.min), writeDouble(this.max), this.integers, Buffer.from(bytes).toString('base64')];
  }

  /** Replaces the state with a snapshot's; checks that the counts add up to n. */
  restore(reader: SnapshotReader, snapshot: unknown): void {
    const parts = reader.list('the snapshot', snapshot, [6]);
    const n = reader.count('n (the first item)', parts[0]);
    const zeros = reader.count('zeros (the second item)', parts[1]);
    const min = reader.double('min (the third item)', parts[2]);
    const max = reader.double('max (the fourth item)', parts[3]);
    const integers = reader.boolean('integers (the fifth item)', parts[4]);
    const bytes = reader.base64('pages (the sixth item)', parts[5]);
    const octaves = new Map<number, Uint32Array>();
    let counted = zeros;
    const at = { pos: 0 };
    while (at.pos < bytes.length) {
      const octave = readVarint(reader, bytes, at);
      if (octave >= 2 * NEGATIVE) reader.fail('pages (the sixth item)', `octave ${octave} out of range`);
      if (octaves.has(octave)) reader.fail('pages (the sixth item)', `octave ${octave} twice`);
      const page = new Uint32Array(SUB_BUCKETS);
      for (let sub = 0; sub < SUB_BUCKETS;) {
        if (at.pos >= bytes.length) reader.fail('pages (the sixth item)', `octave ${octave} ends after ${sub} of its ${SUB_BUCKETS} buckets`);
        const token = readVarint(reader, bytes, at);
        const run = token % 2 === 1 ? (token + 1) / 2 : 1;
        if (sub + run > SUB_BUCKETS) reader.fail('pages (the sixth item)', `octave ${octave} has more than ${SUB_BUCKETS} buckets`);
        if (token % 2 === 0) {
          const count = token / 2;
          if (count > MAX_COUNT) reader.fail('pages (the sixth item)', `a count of ${count}, above ${MAX_COUNT}`);
          page[sub] = count;
          counted += count;
        }
        sub += run;
      }
      octaves.set(octave, page);
    }
    if (counted !== n) reader.fail('the snapshot', `n is ${n} but the buckets and zeros hold ${counted}`);
    if (n > 0 ? !(min <= max) : min !== Infinity || max !== -Infinity || !integers) reader.fail('the snapshot', `min ${min} and max ${max} do not fit n ${n}`);
    this.octaves.clear();
    for (const [octave, page] of octaves) this.octaves.set(octave, page);
    this.zeros = zeros;
    this.n = n;
    this.min = min;
    this.max = max;
    this.integers = integers;
    // the cached page is of the state replaced
    this.lastOctave = -1;
    this.lastPage = undefined;
  }
}

/** Appends `value` (an integer >= 0 below 2^53) as an unsigned LEB128 varint: 7 bits a byte, low first, the high bit set on all but the last. */
function writeVarint(bytes: number[], value: number): void {
  while (value >= 0x80) {
    bytes.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  bytes.push(value);
}

/** Tokens stay below 2^33 (twice a 32-bit count): five bytes of 7 bits hold them. */
const MAX_VARINT_BYTES = 5;

function readVarint(reader: SnapshotReader, bytes: Uint8Array, at: { pos: number }): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    if (at.pos >= bytes.length) break;
    const b = bytes[at.pos++];
    value += (b & 0x7f) * scale;
    if (b < 0x80) return value;
    scale *= 0x80;
  }
  return reader.fail('pages (the sixth item)', `a number cut short or longer than ${MAX_VARINT_BYTES} bytes at byte ${at.pos}`);
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

  /** the histogram's (q is the call's) */
  snapshot(): unknown[] {
    return this.histogram.snapshot();
  }

  restore(snapshot: unknown): void {
    this.histogram.restore(new SnapshotReader('percentile'), snapshot);
  }
}

const CONSTANTS = ['q'];

export const percentile: AggregateFunction = {
  name: 'percentile',
  eventArgs: 1,
  constants: CONSTANTS,
  description:
    'the nearest-rank q-quantile (0 <= q <= 1; 0 is the minimum, 1 the maximum, both exact) as a double, within 0.049 % (2^-11) of the true value; integers below 2048 exact; null when empty',
  check: (values) => void numericDouble('percentile', values[0]),
  prepare(constants) {
    checkConstantCount('percentile', 1, CONSTANTS, 0, constants);
    const q = numberConstant('percentile', constantLabel(1, CONSTANTS, 0), constants[0], 0, 1);
    return () => new Percentile(q);
  },
};
