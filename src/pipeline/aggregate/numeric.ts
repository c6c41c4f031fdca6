/** The numeric functions: sum, min, max, mean, stddev, variance. */
import type { Accumulator, AggregateFunction } from './function';
import { SnapshotReader, writeDouble, writeNumeric } from './snapshot';
import { checkConstantCount, exactInteger, mergeable, numericArg, numericDouble, type Numeric } from './values';

/**
 * Integers (bigints, and numbers that are safe integers: JSON cannot tell
 * 2.0 from 2 either) are summed exactly; other numbers in a compensated
 * (Neumaier) double sum. Most integer sums stay within 2^53, so the exact
 * part is a plain number until it would leave that range, and a bigint only then.
 */
class Sum implements Accumulator {
  /** exact while it is a safe integer */
  small = 0;
  /** what no longer fit in `small` */
  big = 0n;
  /** Neumaier sum of the non-integer numbers, and its running compensation */
  doubles = 0;
  compensation = 0;
  sawDouble = false;

  add(values: readonly unknown[]): void {
    const v = values[0];
    if (typeof v === 'number' && Number.isSafeInteger(v)) return this.addSafe(v);
    const n = numericArg('sum', v);
    if (typeof n === 'bigint') this.big += n;
    else this.addDouble(n);
  }

  private addSafe(v: number): void {
    const s = this.small + v;
    // both operands are safe integers: the sum is exact unless it left the safe range, and then it is not safe either
    if (Number.isSafeInteger(s)) this.small = s;
    else {
      this.big += BigInt(this.small) + BigInt(v);
      this.small = 0;
    }
  }

  private addDouble(x: number): void {
    this.sawDouble = true;
    const t = this.doubles + x;
    this.compensation += Math.abs(this.doubles) >= Math.abs(x) ? this.doubles - t + x : x - t + this.doubles;
    this.doubles = t;
  }

  result(): Numeric {
    if (!this.sawDouble) return this.big === 0n ? this.small : exactInteger(this.big + BigInt(this.small));
    const integers = this.big === 0n ? this.small : Number(this.big + BigInt(this.small));
    // the exact integer part rounded once, then added with the compensation carried along
    const t = this.doubles + integers;
    const c = Math.abs(this.doubles) >= Math.abs(integers) ? this.doubles - t + integers : integers - t + this.doubles;
    return t + (c + this.compensation);
  }

  merge(other: Accumulator): void {
    const o = mergeable('sum', Sum, other);
    this.addSafe(o.small);
    this.big += o.big;
    if (o.sawDouble) {
      this.addDouble(o.doubles);
      this.compensation += o.compensation;
    }
  }

  /**
   * `[small, big]`, and with the double sum once there is one, `[small, big,
   * doubles, compensation]`: each part as it is, so a restored sum rounds
   * exactly as this one would (a sum overflowed to Infinity, its compensation
   * NaN, is written by name).
   */
  snapshot(): unknown[] {
    return this.sawDouble ? [this.small, this.big, writeDouble(this.doubles), writeDouble(this.compensation)] : [this.small, this.big];
  }

  restore(snapshot: unknown): void {
    const reader = new SnapshotReader('sum');
    const [small, big, doubles, compensation] = reader.list('the snapshot', snapshot, [2, 4]);
    const exactSmall = reader.bigint('small (the first item)', small);
    if (!Number.isSafeInteger(small)) reader.fail('small (the first item)', `${exactSmall} is not a safe integer`);
    const exactBig = reader.bigint('big (the second item)', big);
    const sawDouble = doubles !== undefined;
    const sum = sawDouble ? reader.double('doubles (the third item)', doubles) : 0;
    const c = sawDouble ? reader.double('compensation (the fourth item)', compensation) : 0;
    this.small = Number(exactSmall);
    this.big = exactBig;
    this.sawDouble = sawDouble;
    this.doubles = sum;
    this.compensation = c;
  }
}

export const sum: AggregateFunction = {
  name: 'sum',
  eventArgs: 1,
  constants: [],
  description:
    'the sum; 0 when empty. Integers are summed exactly (a number when a safe integer, else a bigint); once a non-integer number is added the result is a double (compensated summation)',
  check: (values) => void numericArg('sum', values[0]),
  prepare(constants) {
    checkConstantCount('sum', 1, [], 0, constants);
    return () => new Sum();
  },
};

/** min and max: the extreme value exactly as it was given (number or bigint; the first of equal ones). */
class Extreme implements Accumulator {
  value: Numeric | null = null;
  constructor(private readonly fn: 'min' | 'max') {}

  add(values: readonly unknown[]): void {
    const v = numericArg(this.fn, values[0]);
    // < and > compare a number with a bigint exactly
    if (this.value === null || (this.fn === 'min' ? v < this.value : v > this.value)) this.value = v;
  }

  result(): Numeric | null {
    return this.value;
  }

  merge(other: Accumulator): void {
    const o = mergeable(this.fn, Extreme, other);
    if (o.fn !== this.fn) throw new Error(`${this.fn}: can only merge another ${this.fn} accumulator`);
    if (o.value !== null) this.add([o.value]);
  }

  /** null when empty, else the value (a bigint within ±2^53, which JSON would read back as a number, tagged "<digits>n"; -0 as "-0") */
  snapshot(): unknown {
    return this.value === null ? null : writeNumeric(this.value);
  }

  restore(snapshot: unknown): void {
    if (snapshot === null) {
      this.value = null;
      return;
    }
    const reader = new SnapshotReader(this.fn);
    const value = reader.numeric('the snapshot', snapshot);
    // add refuses NaN and the infinities: a snapshot holding one was not written by an accumulator
    if (typeof value === 'number' && !Number.isFinite(value)) reader.fail('the snapshot', `${value} is not a value ${this.fn} can hold`);
    this.value = value;
  }
}

const extreme = (fn: 'min' | 'max'): AggregateFunction => ({
  name: fn,
  eventArgs: 1,
  constants: [],
  description: `the ${fn === 'min' ? 'smallest' : 'largest'} value, exactly as given (number or bigint); null when empty`,
  check: (values) => void numericArg(fn, values[0]),
  prepare(constants) {
    checkConstantCount(fn, 1, [], 0, constants);
    return () => new Extreme(fn);
  },
});

export const min = extreme('min');
export const max = extreme('max');

type MomentResult = 'mean' | 'variance' | 'stddev';

/**
 * Count, mean and sum of squared deviations by Welford's algorithm: each
 * value moves the mean by its share, so no large sum of squares is ever
 * subtracted from another (the naive formula loses every digit when the
 * mean is large beside the spread). Merged by Chan et al.'s pairwise formula.
 */
class Moments implements Accumulator {
  n = 0;
  mean = 0;
  m2 = 0;
  constructor(private readonly fn: MomentResult) {}

  add(values: readonly unknown[]): void {
    const x = numericDouble(this.fn, values[0]);
    this.n++;
    const delta = x - this.mean;
    this.mean += delta / this.n;
    this.m2 += delta * (x - this.mean);
  }

  result(): number | null {
    if (this.n === 0) return null;
    if (this.fn === 'mean') return this.mean;
    const variance = this.m2 / this.n;
    return this.fn === 'variance' ? variance : Math.sqrt(variance);
  }

  merge(other: Accumulator): void {
    const o = mergeable(this.fn, Moments, other);
    if (o.fn !== this.fn) throw new Error(`${this.fn}: can only merge another ${this.fn} accumulator`);
    if (o.n === 0) return;
    const n = this.n + o.n;
    const delta = o.mean - this.mean;
    this.mean += (delta * o.n) / n;
    this.m2 += o.m2 + (delta * delta * this.n * o.n) / n;
    this.n = n;
  }

  /** `[n, mean, m2]`, the doubles exactly (overflowed ones by name): the next add continues the same recurrence */
  snapshot(): unknown[] {
    return [this.n, writeDouble(this.mean), writeDouble(this.m2)];
  }

  restore(snapshot: unknown): void {
    const reader = new SnapshotReader(this.fn);
    const [n, mean, m2] = reader.list('the snapshot', snapshot, [3]);
    const count = reader.count('n (the first item)', n);
    const runningMean = reader.double('mean (the second item)', mean);
    const squares = reader.double('m2 (the third item)', m2);
    this.n = count;
    this.mean = runningMean;
    this.m2 = squares;
  }
}

const moments = (fn: MomentResult, description: string): AggregateFunction => ({
  name: fn,
  eventArgs: 1,
  constants: [],
  description,
  check: (values) => void numericDouble(fn, values[0]),
  prepare(constants) {
    checkConstantCount(fn, 1, [], 0, constants);
    return () => new Moments(fn);
  },
});

export const mean = moments('mean', 'the arithmetic mean, a double (Welford); null when empty');
export const variance = moments(
  'variance',
  "the population variance (divides by n, not n - 1), a double (Welford's algorithm, stable when the mean is large beside the spread); null when empty, 0 for one event",
);
export const stddev = moments(
  'stddev',
  'the population standard deviation (square root of the population variance), a double (Welford); null when empty, 0 for one event',
);
