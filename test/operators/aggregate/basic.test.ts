import { expect } from 'chai';
import fc from 'fast-check';
import { AGGREGATE_FUNCTIONS } from '../../../src/pipeline/aggregate/functions';
import { accumulator, aggregate, fed, merged, thrown } from './support';

describe('aggregate functions: the registry', () => {
  it('has every function of the window operator, each described and with its argument shape', () => {
    const shapes = [...AGGREGATE_FUNCTIONS.values()].map((f) => [f.name, f.eventArgs, f.constants.join(','), f.optionalConstants ?? 0]);
    expect(shapes).to.deep.equal([
      ['count', 0, '', 0],
      ['count_if', 1, '', 0],
      ['sum', 1, '', 0],
      ['min', 1, '', 0],
      ['max', 1, '', 0],
      ['mean', 1, '', 0],
      ['variance', 1, '', 0],
      ['stddev', 1, '', 0],
      ['percentile', 1, 'q', 0],
      ['distinct', 1, '', 0],
      ['first', 1, '', 0],
      ['last', 1, '', 0],
      ['collect', 1, 'limit', 1],
    ]);
    for (const f of AGGREGATE_FUNCTIONS.values()) expect(f.description, f.name).to.have.length.above(20);
  });

  it('refuses constants a function does not take, saying how many it takes', () => {
    expect(thrown(() => accumulator('sum', [1]))).to.equal('sum: takes 0 constant arguments after its 1 per-event one (none), got 1');
    expect(thrown(() => accumulator('percentile', []))).to.equal('percentile: takes 1 constant argument after its 1 per-event one (q), got 0');
    expect(thrown(() => accumulator('collect', [1, 2]))).to.equal('collect: takes 0 to 1 constant argument after its 1 per-event one (limit), got 2');
  });

  it('merges only an accumulator of the same function', () => {
    expect(thrown(() => accumulator('sum').merge(accumulator('count')))).to.equal('sum: can only merge another sum accumulator');
    expect(thrown(() => accumulator('min').merge(accumulator('max')))).to.equal('min: can only merge another min accumulator');
    expect(thrown(() => accumulator('mean').merge(accumulator('variance')))).to.equal('mean: can only merge another mean accumulator');
  });
});

describe('aggregate functions: count, count_if, first, last', () => {
  it('count counts events, 0 when empty, and keeps counting after a read', () => {
    const acc = accumulator('count');
    expect(acc.result()).to.equal(0);
    acc.add([]);
    acc.add([]);
    expect(acc.result()).to.equal(2);
    acc.add([]);
    expect(acc.result()).to.equal(3);
  });

  it('count_if counts the events whose condition is true', () => {
    expect(aggregate('count_if', [true, false, true, true])).to.equal(3);
    expect(aggregate('count_if', [])).to.equal(0);
  });

  it('count_if refuses a condition that is not a bool, naming the function and the type', () => {
    expect(thrown(() => fed('count_if', [1]))).to.equal('count_if: expected a bool, got int');
    expect(thrown(() => fed('count_if', [0.5]))).to.equal('count_if: expected a bool, got double');
    expect(thrown(() => fed('count_if', ['true']))).to.equal('count_if: expected a bool, got string');
    expect(thrown(() => fed('count_if', [null]))).to.equal('count_if: expected a bool, got null');
  });

  it('first and last keep the first and the last value as given, null when empty', () => {
    const list = [1, 2];
    expect(aggregate('first', [list, 'b', 3n])).to.equal(list);
    expect(aggregate('last', ['a', 'b', 3n])).to.equal(3n);
    expect(aggregate('first', [null, 2])).to.equal(null);
    expect(aggregate('last', [1, null])).to.equal(null);
    expect(aggregate('first', [])).to.equal(null);
    expect(aggregate('last', [])).to.equal(null);
  });

  it('count, count_if, first and last agree with a recount, whole or merged from two parts', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.boolean(), fc.integer(), fc.string())), fc.nat(), (values, at) => {
        const bools = values.map((v) => v === true);
        expect(
          aggregate(
            'count',
            values.map(() => undefined),
          ),
        ).to.equal(values.length);
        expect(aggregate('count_if', bools)).to.equal(bools.filter((b) => b).length);
        expect(merged('count_if', bools, at).result()).to.equal(bools.filter((b) => b).length);
        expect(merged('count', values, at).result()).to.equal(values.length);
        expect(aggregate('first', values)).to.equal(values.length > 0 ? values[0] : null);
        expect(aggregate('last', values)).to.equal(values.length > 0 ? values[values.length - 1] : null);
        expect(merged('first', values, at).result()).to.equal(values.length > 0 ? values[0] : null);
        expect(merged('last', values, at).result()).to.equal(values.length > 0 ? values[values.length - 1] : null);
      }),
      { numRuns: 200 },
    );
  });
});
