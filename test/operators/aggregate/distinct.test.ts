import { celList, celMap, celUint } from '@bufbuild/cel';
import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalKey, DISTINCT_STANDARD_ERROR, EXACT_LIMIT } from '../../../src/pipeline/aggregate/distinct';
import { accumulator, aggregate, fed, merged } from './support';

/** the fixed seed of the sketch's accuracy property (see there) */
const DISTINCT_SEED = 1;

/** Values equal as CEL compares them: numbers by value across number and bigint, everything else by type and value. */
function celEqual(a: unknown, b: unknown): boolean {
  const numeric = (v: unknown) => typeof v === 'number' || typeof v === 'bigint';
  if (numeric(a) && numeric(b)) return a == b; // loose equality compares a number and a bigint exactly
  return typeof a === typeof b && a === b;
}

/** The distinct count by pairwise comparison: slow, obviously right. */
function naiveDistinct(values: readonly unknown[]): number {
  const seen: unknown[] = [];
  for (const v of values) if (!seen.some((s) => celEqual(s, v))) seen.push(v);
  return seen.length;
}

describe('aggregate functions: distinct', () => {
  it('is 0 when empty and counts values as CEL equality compares them', () => {
    expect(aggregate('distinct', [])).to.equal(0);
    // 1, 1.0 (the same JS number), 1n and a uint 1 are one value; the string "1" is another
    expect(aggregate('distinct', [1, 1.0, 1n, celUint(1n), '1'])).to.equal(2);
    expect(aggregate('distinct', [-0, 0, 0n])).to.equal(1);
    expect(aggregate('distinct', [2 ** 60, 2n ** 60n, 2n ** 60n + 1n])).to.equal(2);
    expect(aggregate('distinct', [0.1, 0.1, 0.2, true, 'true', null, 'null'])).to.equal(6);
  });

  it('compares lists by their elements in order and maps by their entries in any order', () => {
    expect(aggregate('distinct', [[1, 'a'], [1n, 'a'], ['a', 1], celList([1n, 'a'])])).to.equal(2);
    expect(aggregate('distinct', [{ a: 1, b: [2] }, { b: [2n], a: 1.0 }, { a: 1 }, celMap(new Map<string, unknown>([['a', 1n]]) as never)])).to.equal(2);
    expect(aggregate('distinct', [Buffer.from('ab'), new Uint8Array([97, 98]), 'ab'])).to.equal(2);
  });

  it('has canonical keys that keep kinds apart', () => {
    expect(canonicalKey(1)).to.equal(canonicalKey(1n));
    expect(canonicalKey(1e21)).to.equal(canonicalKey(10n ** 21n));
    expect(canonicalKey('1')).to.not.equal(canonicalKey(1));
    expect(canonicalKey(['1'])).to.not.equal(canonicalKey([1]));
    expect(canonicalKey('[1]')).to.not.equal(canonicalKey([1]));
    expect(canonicalKey({ a: 1 })).to.not.equal(canonicalKey({ '"a"': 1 }));
  });

  it(`is exact up to ${EXACT_LIMIT} distinct values and says when it estimates`, () => {
    const values = Array.from({ length: EXACT_LIMIT }, (_, i) => `user-${i}`);
    const acc = fed('distinct', [...values, ...values]);
    expect(acc.result()).to.equal(EXACT_LIMIT);
    expect(acc.meta!()).to.equal(undefined);
    acc.add(['one more']);
    expect(acc.meta!()).to.deep.equal({ estimated: true });
    expect(Math.abs((acc.result() as number) - (EXACT_LIMIT + 1))).to.be.at.most(3 * DISTINCT_STANDARD_ERROR * (EXACT_LIMIT + 1));
  });

  it('is exact on random values below the threshold, whole or merged from two parts', () => {
    const value = fc.oneof(
      fc.integer({ min: -30, max: 30 }),
      fc.bigInt({ min: -30n, max: 30n }),
      fc.constantFrom(0.5, -0.5, 1e21, 2 ** 60, 10n ** 21n, 2n ** 60n, -(2n ** 60n)),
      fc.string({ maxLength: 2 }),
      fc.boolean(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.array(value, { maxLength: 150 }), fc.nat(), (values, at) => {
        const want = naiveDistinct(values);
        expect(aggregate('distinct', values)).to.equal(want);
        expect(merged('distinct', values, at).result()).to.equal(want);
      }),
      { numRuns: 500 },
    );
  });

  // A 3-sigma bound fails for about 0.27 % of honest draws (measured: over 150 sets of 150,000 values the
  // root-mean-square error was 0.75-0.80 %, the stated 0.81 %, with 1 of 450 beyond 3 sigma), so 12 fresh sets
  // would fail about one run in 30. This property therefore always runs with its own fixed seed, under CI
  // and locally alike: its sets are fixed, and a failure means the sketch or the hash changed, not bad luck.
  // (The suite's CI seed, 20261121, draws 156,326 ints the sketch counts as 152,515: 2.438 %, 3.0006 sigma.)
  it('estimates above the threshold within 3 standard errors (1.04 / sqrt(2^14)), whole, merged, and from sketches merged', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: EXACT_LIMIT + 1, max: 200_000 }),
        fc.constantFrom('int', 'string', 'double'),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.nat(),
        (n, kind, offset, cut) => {
          const value = (i: number) => (kind === 'int' ? offset + i : kind === 'double' ? (offset + i) / 8 + 0.0625 : `${offset.toString(36)}:${i}`);
          const whole = accumulator('distinct');
          const first = accumulator('distinct');
          const second = accumulator('distinct');
          const at = cut % n;
          for (let i = 0; i < n; i++) {
            const v = value(i);
            whole.add([v]);
            whole.add([v]); // repeats do not count
            (i < at ? first : second).add([v]);
          }
          first.merge(second);
          for (const acc of [whole, first]) {
            const error = Math.abs((acc.result() as number) - n) / n;
            expect(error, `${String(acc.result())} for ${n} ${kind}s`).to.be.at.most(3 * DISTINCT_STANDARD_ERROR);
          }
        },
      ),
      { numRuns: 12, seed: DISTINCT_SEED },
    );
  });
});
