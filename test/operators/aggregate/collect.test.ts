import { expect } from 'chai';
import fc from 'fast-check';
import { Collect, COLLECT_DEFAULT_LIMIT } from '../../../src/pipeline/aggregate/collect';
import type { Accumulator } from '../../../src/pipeline/aggregate/functions';
import { accumulator, aggregate, fed, merged, thrown } from './support';

/** What a collect accumulator dropped (it is a Collect: anything else fails the test). */
function dropped(acc: Accumulator): number {
  if (!(acc instanceof Collect)) throw new Error(`not a Collect: ${acc.constructor.name}`);
  return acc.dropped();
}

describe('aggregate functions: collect', () => {
  it('lists the values in arrival order, [] when empty, up to 100 by default', () => {
    expect(aggregate('collect', [])).to.deep.equal([]);
    expect(aggregate('collect', [3, 'a', null, [1], 3])).to.deep.equal([3, 'a', null, [1], 3]);
    const many = Array.from({ length: 150 }, (_, i) => i);
    expect(aggregate('collect', many)).to.deep.equal(many.slice(0, COLLECT_DEFAULT_LIMIT));
  });

  it('stops at its limit and counts what it dropped, for the meta of the output', () => {
    const acc = fed('collect', ['a', 'b', 'c', 'd'], [2]);
    expect(acc.result()).to.deep.equal(['a', 'b']);
    expect(dropped(acc)).to.equal(2);
    expect(acc.meta!()).to.deep.equal({ dropped: 2 });
    expect(fed('collect', ['a'], [2]).meta!()).to.equal(undefined);
  });

  it('hands out a copy, so a partial read does not change with later events', () => {
    const acc = fed('collect', [1], [5]);
    const read = acc.result();
    acc.add([2]);
    expect(read).to.deep.equal([1]);
    expect(acc.result()).to.deep.equal([1, 2]);
  });

  it('takes a limit that is a positive integer up to 100000, naming the argument otherwise', () => {
    expect(aggregate('collect', [1, 2], [1n])).to.deep.equal([1]);
    expect(thrown(() => accumulator('collect', [0]))).to.equal('collect: argument 2 (limit) must be an integer from 1 to 100000, got 0');
    expect(thrown(() => accumulator('collect', [2.5]))).to.equal('collect: argument 2 (limit) must be an integer from 1 to 100000, got 2.5');
    expect(thrown(() => accumulator('collect', [1_000_000]))).to.equal('collect: argument 2 (limit) must be an integer from 1 to 100000, got 1000000');
    expect(thrown(() => accumulator('collect', ['10']))).to.equal('collect: argument 2 (limit) must be an integer from 1 to 100000, got string');
  });

  it('keeps exactly the first min(n, limit) values and counts the rest as dropped, whole or merged from two parts', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer(), fc.string()), { maxLength: 60 }), fc.integer({ min: 1, max: 40 }), fc.nat(), (values, limit, at) => {
        for (const acc of [fed('collect', values, [limit]), merged('collect', values, at, [limit])]) {
          expect(acc.result()).to.deep.equal(values.slice(0, limit));
          expect(dropped(acc)).to.equal(Math.max(0, values.length - limit));
        }
      }),
      { numRuns: 500 },
    );
  });
});
