import { expect } from 'chai';
import fc from 'fast-check';
import { nearestRank, PERCENTILE_RELATIVE_ERROR } from '../../../src/pipeline/aggregate/percentile';
import { accumulator, aggregate, fed, merged, thrown } from './support';

/** The nearest-rank percentile of a sorted array, q = perMille / 1000 in integers (no float rounding in the rank). */
function atNearestRank(sorted: readonly number[], perMille: number): number {
  const rank = Math.max(1, Math.ceil((perMille * sorted.length) / 1000 - 1e-9));
  return sorted[rank - 1];
}

/** Any finite double of normal magnitude (subnormals have fewer bits than the buckets resolve), and zeros. */
const normal = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => x === 0 || Math.abs(x) >= 2 ** -1022);

function within(got: unknown, want: number): void {
  expect(got).to.be.a('number');
  // the bound, plus rounding in computing a bucket's midpoint
  expect(Math.abs((got as number) - want), `${String(got)} vs ${want}`).to.be.at.most(Math.abs(want) * PERCENTILE_RELATIVE_ERROR * (1 + 1e-12));
}

describe('aggregate functions: percentile', () => {
  it('is null when empty; q 0 and q 1 give the exact minimum and maximum', () => {
    expect(aggregate('percentile', [], [0.5])).to.equal(null);
    const values = [0.1234567, 3, -2.718281828, 1e9 + 0.5];
    expect(aggregate('percentile', values, [0])).to.equal(-2.718281828);
    expect(aggregate('percentile', values, [1])).to.equal(1e9 + 0.5);
  });

  it('is the nearest rank: the lower median, and p7 of 1..100 is 7 (0.07 * 100 in doubles is 7.000000000000001)', () => {
    const oneToTen = Array.from({ length: 10 }, (_, i) => i + 1);
    expect(aggregate('percentile', oneToTen, [0.5])).to.equal(5);
    expect(aggregate('percentile', oneToTen, [0.51])).to.equal(6);
    const oneToHundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(aggregate('percentile', oneToHundred, [0.99])).to.equal(99);
    expect(aggregate('percentile', oneToHundred, [0.07])).to.equal(7);
    expect(aggregate('percentile', oneToHundred, [0.991])).to.equal(100);
  });

  it('is exact for integers below 2048 and returns whole numbers for integer inputs', () => {
    const values = [2047, -2047, 0, 1, 1000, -3, 5, 5, 5];
    const sorted = [...values].sort((a, b) => a - b);
    for (let k = 0; k <= 1000; k += 50) expect(aggregate('percentile', values, [k / 1000])).to.equal(atNearestRank(sorted, k));
    expect(Number.isInteger(aggregate('percentile', [10_000, 20_001, 30_000], [0.5]))).to.equal(true);
  });

  it('handles negatives, zeros, fractions, tiny and huge magnitudes, and bigints, within 0.049 %', () => {
    within(aggregate('percentile', [-5.5, -1.25, 0, 3.75], [0.5]), -1.25);
    expect(aggregate('percentile', [-5.5, -1.25, 0, 3.75], [0.75])).to.equal(0);
    within(aggregate('percentile', [0.000123, 0.000456, 0.000789], [0.5]), 0.000456);
    within(aggregate('percentile', [1e300, 3e300, 2e300], [0.5]), 2e300);
    within(aggregate('percentile', [2n ** 64n, 2n ** 70n, 1n], [0.5]), 2 ** 64);
  });

  it('refuses a q outside [0, 1] or not a number, naming the argument', () => {
    expect(thrown(() => accumulator('percentile', [1.5]))).to.equal('percentile: argument 2 (q) must be between 0 and 1, got 1.5');
    expect(thrown(() => accumulator('percentile', [-0.1]))).to.equal('percentile: argument 2 (q) must be between 0 and 1, got -0.1');
    expect(thrown(() => accumulator('percentile', ['0.5']))).to.equal('percentile: argument 2 (q) must be a number between 0 and 1, got string');
    expect(thrown(() => accumulator('percentile', [NaN]))).to.equal('percentile: argument 2 (q) must be between 0 and 1, got NaN');
    expect(aggregate('percentile', [3, 1, 2], [1n])).to.equal(3); // a CEL int constant
  });

  it('refuses values that are not finite numbers', () => {
    expect(thrown(() => fed('percentile', ['12'], [0.5]))).to.equal('percentile: expected a number, got string');
    expect(thrown(() => fed('percentile', [Infinity], [0.5]))).to.equal('percentile: expected a finite number, got Infinity');
  });

  it('takes the rank q * n rounded up, a product within a few ulps of an integer counting as that integer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 0, max: 1000 }), (n, perMille) => {
        const wanted = Math.max(1, Math.floor((perMille * n + 999) / 1000)); // ceil(perMille * n / 1000) in integers
        expect(nearestRank(perMille / 1000, n)).to.equal(wanted);
      }),
      { numRuns: 2000 },
    );
  });

  it('is within 2^-11 (relative) of the sorted-array nearest-rank percentile, whole or merged from two parts', () => {
    fc.assert(
      fc.property(fc.array(normal, { minLength: 1, maxLength: 200 }), fc.integer({ min: 0, max: 1000 }), fc.nat(), (values, perMille, at) => {
        const want = atNearestRank(
          [...values].sort((a, b) => a - b),
          perMille,
        );
        within(aggregate('percentile', values, [perMille / 1000]), want);
        within(merged('percentile', values, at, [perMille / 1000]).result(), want);
      }),
      { numRuns: 1000 },
    );
  });

  it('is within 2^-11 on many values of a few magnitudes (latencies), for the usual quantiles', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0.001, max: 10_000, noNaN: true }), { minLength: 500, maxLength: 5000 }), (values) => {
        const sorted = [...values].sort((a, b) => a - b);
        const acc = fed('percentile', values, [0.99]);
        within(acc.result(), atNearestRank(sorted, 990));
        for (const perMille of [500, 900, 999]) within(fed('percentile', values, [perMille / 1000]).result(), atNearestRank(sorted, perMille));
      }),
      { numRuns: 30 },
    );
  });

  it('is exact on integers below 2048, whole or merged', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -2047, max: 2047 }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.nat(),
        (values, perMille, at) => {
          const want = atNearestRank(
            [...values].sort((a, b) => a - b),
            perMille,
          );
          expect(aggregate('percentile', values, [perMille / 1000])).to.equal(want);
          expect(merged('percentile', values, at, [perMille / 1000]).result()).to.equal(want);
        },
      ),
      { numRuns: 500 },
    );
  });
});
