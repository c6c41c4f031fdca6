import { expect } from 'chai';
import fc from 'fast-check';
import * as hdr from 'hdr-histogram-js';
import { BucketCounts } from '../../src/connectors/blackhole/bucket-counts';

const build = (digits: number) =>
  hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 100_000_000_000,
    numberOfSignificantValueDigits: digits as 1 | 2 | 3 | 4 | 5,
    useWebAssembly: false,
  });

/** The blackhole counts latencies per histogram bucket and adds them at the report: the histogram must be the same as recording each. */
describe('hot path: the blackhole’s bucket counts', () => {
  it('give the same histogram as recording every value (percentiles, mean, max, count)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 5_000_000 }), fc.integer({ min: 1, max: 99_000_000_000 })), {
          minLength: 1,
          maxLength: 300,
        }),
        (digits, values) => {
          const each = build(digits);
          const counted = build(digits);
          const counts = new BucketCounts(counted);
          for (const v of values) {
            each.recordValue(v);
            counts.record(v);
          }
          counts.flushInto();
          for (const p of [0, 10, 50, 90, 99, 99.9, 100]) expect(counted.getValueAtPercentile(p), `p${p}`).to.equal(each.getValueAtPercentile(p));
          expect(counted.totalCount).to.equal(each.totalCount);
          expect(counted.maxValue).to.equal(each.maxValue);
          expect(counted.mean).to.equal(each.mean);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('starts again after a flush', () => {
    const histogram = build(2);
    const counts = new BucketCounts(histogram);
    counts.record(1000);
    counts.flushInto();
    counts.flushInto();
    expect(histogram.totalCount).to.equal(1);
  });
});
