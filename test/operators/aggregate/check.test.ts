import { expect } from 'chai';
import fc from 'fast-check';
import { AGGREGATE_FUNCTIONS } from '../../../src/pipeline/aggregate/functions';

const CONSTANTS: Record<string, unknown[]> = { percentile: [0.5], collect: [10] };

/** What `f` throws, or undefined. */
const thrown = (f: () => void): string | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

describe('aggregate functions: check', () => {
  it('refuses exactly what add refuses, with the same message, and changes nothing', () => {
    const value = fc.oneof(
      fc.integer(),
      fc.double(),
      fc.bigInt(),
      fc.string(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 2 }),
      fc.object({ maxDepth: 1 }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...AGGREGATE_FUNCTIONS.keys()), value, (name, v) => {
        const fn = AGGREGATE_FUNCTIONS.get(name)!;
        const make = fn.prepare(CONSTANTS[name] ?? []);
        const checked = thrown(() => fn.check?.([v]));
        const acc = make();
        const added = thrown(() => acc.add([v]));
        expect(checked, `${name}(${fc.stringify(v)})`).to.equal(added);
        if (checked !== undefined) expect(acc.result(), 'a refused value leaves the accumulator empty').to.deep.equal(make().result());
      }),
      { numRuns: 2000 },
    );
  });
});
