import { celUint } from '@bufbuild/cel';
import { expect } from 'chai';
import fc from 'fast-check';
import { compactJson } from '../../../src/codecs/json/compact';
import { parsePrecise } from '../../../src/codecs/json/precise-parse';
import { setOwn } from '../../../src/codecs/integers';
import { EXACT_LIMIT } from '../../../src/pipeline/aggregate/distinct';
import { AGGREGATE_FUNCTIONS, type Accumulator } from '../../../src/pipeline/aggregate/functions';
import { accumulator, fed, thrown } from './support';

/** A snapshot as a changelog gives it back: eddy's JSON text, as bytes, read again. */
function throughJson(snapshot: unknown): unknown {
  return parsePrecise(Buffer.from(compactJson(snapshot), 'utf8').toString('utf8'));
}

/** A fresh accumulator restored from `from`'s snapshot, taken through JSON. */
function restored(from: Accumulator, name: string, constants: readonly unknown[]): Accumulator {
  const acc = accumulator(name, constants);
  acc.restore(throughJson(from.snapshot()));
  return acc;
}

function feed(acc: Accumulator, values: readonly unknown[]): void {
  for (const v of values) acc.add([v]);
}

/**
 * A value written so that two values have the same text only when they are
 * the same in every way a reader could see: -0 beside 0, NaN, a bigint
 * beside the number, a Buffer beside another Uint8Array, undefined beside
 * null, the order of a map's fields (chai's deep equal tells none of the
 * last three apart).
 */
function exactText(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${value}n`;
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return String(value);
    case 'undefined':
      return 'undefined';
  }
  if (value === null) return 'null';
  if (Buffer.isBuffer(value)) return `Buffer<${value.toString('hex')}>`;
  if (value instanceof Uint8Array) return `Uint8Array<${Buffer.from(value).toString('hex')}>`;
  if (Array.isArray(value)) return `[${value.map(exactText).join(',')}]`;
  if (Object.getPrototypeOf(value) !== Object.prototype) throw new Error(`not a value a function gives: ${Object.prototype.toString.call(value)}`);
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .map((k) => `${JSON.stringify(k)}:${exactText(record[k])}`)
    .join(',')}}`;
}

/** What an accumulator shows: its result and meta exactly, and its state as its snapshot's JSON. */
function shown(acc: Accumulator): { result: string; meta: string; state: string } {
  return { result: exactText(acc.result()), meta: exactText(acc.meta?.()), state: compactJson(acc.snapshot()) };
}

// --- values ---

/** bigints at the edges of what JSON reads back as a number (±2^53), small ones, 64-bit ones, nanosecond timestamps */
const bigints = fc.oneof(
  fc.constantFrom(0n, 5n, -7n, 2n ** 53n, -(2n ** 53n), 2n ** 53n - 1n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n)),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
  fc.bigInt({ min: 1_600_000_000_000_000_000n, max: 1_900_000_000_000_000_000n }),
);

/** finite numbers: small integers (exact sums), fractions, -0, any magnitude up to the largest double, unsafe integers, epoch-ms timestamps */
const finiteNumbers = fc.oneof(
  { arbitrary: fc.integer({ min: -1000, max: 1000 }), weight: 3 },
  { arbitrary: fc.double({ min: -1000, max: 1000, noNaN: true }), weight: 3 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.maxSafeInteger(), weight: 1 },
  { arbitrary: fc.constantFrom(-0, 0.1, 2 ** 53, 2 ** 60, -(2 ** 60), Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE), weight: 1 },
  { arbitrary: fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }), weight: 1 },
);

/** what the numeric functions take: finite numbers, bigints, now and then one beyond the double range (a double function sees ±Infinity) */
const numerics = fc.oneof(
  { arbitrary: finiteNumbers, weight: 6 },
  { arbitrary: bigints, weight: 2 },
  { arbitrary: fc.constantFrom(10n ** 400n, -(10n ** 400n)), weight: 1 },
);

/**
 * what sum's compensated part is for: huge doubles that cancel around small
 * ones (0.1 + 1e20 + 0.1 - 1e20 is 0.2 only with the compensation), and ones
 * whose sum overflows to Infinity (then NaN: 1.7e308 + 1.7e308 - 1.7e308)
 */
const sumValues = fc.oneof(
  { arbitrary: numerics, weight: 3 },
  { arbitrary: fc.constantFrom(0.1, 0.25, -0.3, 1e-9), weight: 3 },
  { arbitrary: fc.constantFrom(1e20, -1e20), weight: 2 },
  { arbitrary: fc.constantFrom(2 ** 70, -(2 ** 70), 1e16 + 2), weight: 1 },
  { arbitrary: fc.constantFrom(1.7e308, -1.7e308, Number.MAX_VALUE), weight: 1 },
);

const isoTimestamps = fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());

/** the leaves a held value can have, those JSON changes among them: -0, NaN, the infinities, small bigints, bytes, undefined */
const leaves = fc.oneof(
  fc.string({ maxLength: 6 }),
  isoTimestamps,
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.double(),
  bigints,
  fc.uint8Array({ maxLength: 6 }).map((b) => Buffer.from(b)),
  fc.uint8Array({ maxLength: 6 }),
  fc.constant(undefined),
);

const keys = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('__proto__', 'constructor', 'toJSON', '0', '10'));

/** any value an argument can evaluate to: leaves, lists and maps of them */
const { value: anyValue } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaves, tie('list'), tie('map')),
  list: fc.array(tie('value'), { maxLength: 4 }),
  map: fc.array(fc.tuple(keys, tie('value')), { maxLength: 4 }).map((entries) => {
    const record: Record<string, unknown> = {};
    for (const [k, v] of entries) setOwn(record, k, v);
    return record;
  }),
}));

/**
 * A run of 600 to 1300 values from `start` on (ints, every third a string),
 * so a prefix is past the exact limit in about a third of the runs of
 * distinct that draw one, and a prefix and a suffix overlap or cross it
 * together in others.
 */
const manyValues = fc
  .record({ start: fc.integer({ min: 0, max: 2000 }), n: fc.integer({ min: 600, max: 1300 }) })
  .map(({ start, n }) => Array.from({ length: n }, (_, i) => ((start + i) % 3 === 0 ? `s${start + i}` : start + i)));

/** what distinct counts: a few values, so they repeat (1, 1n, -0 and 0 are one value each), CEL uints, or enough to reach its sketch */
const distinctValues = fc.oneof(
  { arbitrary: fc.array(fc.oneof(fc.constantFrom(1, 1n, '1', -0, 0, NaN, Infinity, -Infinity, 2 ** 60, 0.5), anyValue), { maxLength: 30 }), weight: 2 },
  {
    arbitrary: fc.array(
      fc.integer({ min: 0, max: 20 }).map((n) => celUint(BigInt(n))),
      { maxLength: 10 },
    ),
    weight: 1,
  },
  { arbitrary: manyValues, weight: 3 },
);

interface Case {
  name: string;
  /** the call's constants */
  constants: fc.Arbitrary<unknown[]>;
  /** a run of values (prefix, suffix) */
  values: fc.Arbitrary<unknown[]>;
}

const none = fc.constant<unknown[]>([]);
const short = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown[]> => fc.array(arb, { maxLength: 25 });

const CASES: Case[] = [
  { name: 'count', constants: none, values: short(anyValue) },
  { name: 'count_if', constants: none, values: short(fc.boolean()) },
  { name: 'sum', constants: none, values: fc.oneof(short(sumValues), short(fc.integer({ min: -1000, max: 1000 })), short(fc.maxSafeInteger())) },
  { name: 'min', constants: none, values: short(fc.oneof(finiteNumbers, bigints)) },
  { name: 'max', constants: none, values: short(fc.oneof(finiteNumbers, bigints)) },
  { name: 'mean', constants: none, values: short(numerics) },
  { name: 'variance', constants: none, values: short(numerics) },
  { name: 'stddev', constants: none, values: short(numerics) },
  {
    name: 'percentile',
    constants: fc.oneof(fc.constantFrom(0, 0.5, 0.99, 1), fc.double({ min: 0, max: 1, noNaN: true })).map((q) => [q]),
    values: fc.oneof(short(numerics), fc.array(fc.integer({ min: -5000, max: 5000 }), { maxLength: 300 })),
  },
  { name: 'distinct', constants: none, values: distinctValues },
  { name: 'first', constants: none, values: short(anyValue) },
  { name: 'last', constants: none, values: short(anyValue) },
  {
    name: 'collect',
    constants: fc.oneof(
      none,
      fc.integer({ min: 1, max: 20 }).map((limit) => [limit]),
    ),
    values: short(anyValue),
  },
];

describe('aggregate functions: snapshot and restore', () => {
  it('has a case for every function', () => {
    expect(CASES.map((c) => c.name).sort()).to.deep.equal([...AGGREGATE_FUNCTIONS.keys()].sort());
  });

  for (const { name, constants, values } of CASES) {
    describe(name, () => {
      it('restored from a snapshot through JSON, continues exactly as the accumulator it was taken from, and as one that took every value', () => {
        fc.assert(
          fc.property(constants, values, values, (consts, prefix, suffix) => {
            const a = fed(name, prefix, consts);
            const b = restored(a, name, consts);
            // read back, the state writes the same snapshot: no part is lost or changed
            expect(shown(b)).to.deep.equal(shown(a));
            feed(a, suffix);
            feed(b, suffix);
            const c = fed(name, [...prefix, ...suffix], consts);
            expect(shown(b)).to.deep.equal(shown(a));
            expect(shown(c)).to.deep.equal(shown(a));
          }),
        );
      });

      it('gives a snapshot later adds do not change', () => {
        fc.assert(
          fc.property(constants, values, values, (consts, prefix, suffix) => {
            const a = fed(name, prefix, consts);
            const snapshot = a.snapshot();
            const text = compactJson(snapshot);
            const raw = exactText(snapshot);
            feed(a, suffix);
            a.result();
            expect(compactJson(snapshot)).to.equal(text);
            expect(exactText(snapshot)).to.equal(raw);
          }),
        );
      });

      it('merges after a restore as before, on either side of the merge', () => {
        fc.assert(
          fc.property(constants, values, values, values, (consts, prefix, other, suffix) => {
            const a = fed(name, prefix, consts);
            const b = restored(a, name, consts);
            a.merge(fed(name, other, consts));
            b.merge(fed(name, other, consts));
            feed(a, suffix);
            feed(b, suffix);
            expect(shown(b)).to.deep.equal(shown(a));

            const into = fed(name, other, consts);
            const intoRestored = fed(name, other, consts);
            into.merge(fed(name, prefix, consts));
            intoRestored.merge(restored(fed(name, prefix, consts), name, consts));
            expect(shown(intoRestored)).to.deep.equal(shown(into));
          }),
          { numRuns: 50 },
        );
      });

      it('restored into an accumulator that took values, holds the state of the snapshot and none of its own', () => {
        fc.assert(
          fc.property(constants, values, values, values, (consts, own, prefix, suffix) => {
            const a = fed(name, prefix, consts);
            // ending with the values that come next: what it remembers of its last add (percentile's page) would be of use, were it kept
            const b = fed(name, [...own, ...[...suffix].reverse()], consts);
            b.restore(throughJson(a.snapshot()));
            feed(a, suffix);
            feed(b, suffix);
            expect(shown(b)).to.deep.equal(shown(a));
          }),
          { numRuns: 50 },
        );
      });

      it('restores from the snapshot as it is, without JSON, and leaves it as it was', () => {
        fc.assert(
          fc.property(constants, values, values, (consts, prefix, suffix) => {
            const a = fed(name, prefix, consts);
            const snapshot = a.snapshot();
            const raw = exactText(snapshot);
            const b = accumulator(name, consts);
            b.restore(snapshot);
            expect(exactText(snapshot)).to.equal(raw);
            feed(a, suffix);
            feed(b, suffix);
            expect(shown(b)).to.deep.equal(shown(a));
          }),
          { numRuns: 50 },
        );
      });

      it('refuses what is no snapshot of it, naming the function and the part', () => {
        const consts = fc.sample(constants, { numRuns: 1, seed: 1 })[0];
        for (const bad of [undefined, 'x', { n: 1 }, [[], [], [], [], [], [], []], NaN, true]) {
          expect(thrown(() => accumulator(name, consts).restore(bad))).to.match(new RegExp(`^${name}: cannot restore its state: \\S`));
        }
      });
    });
  }

  describe('values held as they came (first, last, collect)', () => {
    it('keeps what JSON would change: -0, NaN, infinities, small bigints, undefined, Buffer and Uint8Array, a __proto__ field', () => {
      const proto: Record<string, unknown> = {};
      setOwn(proto, '__proto__', { x: -0 });
      const values = [-0, NaN, Infinity, -Infinity, 5n, 2n ** 53n, 2n ** 64n, undefined, Buffer.from('hi'), new Uint8Array([1, 2]), proto, [{ a: [-0, 1n] }]];
      for (const [name, consts] of [
        ['first', []],
        ['last', []],
        ['collect', [100]],
      ] as const) {
        for (const v of name === 'collect' ? [values] : values.map((v) => [v])) {
          const a = fed(name, v, consts);
          const b = restored(a, name, consts);
          expect(exactText(b.result())).to.equal(exactText(a.result()));
        }
      }
      expect(Buffer.isBuffer(restored(fed('first', [Buffer.from('hi')]), 'first', []).result())).to.equal(true);
    });

    it('writes plain JSON values as they are, bytes as base64 with a patch, and copies them', () => {
      const held = { a: [1, 'x'] };
      const acc = fed('collect', [held, 2], [10]);
      const snapshot = acc.snapshot() as unknown[];
      expect(snapshot).to.deep.equal([0, [{ a: [1, 'x'] }, 2]]);
      // a result's values are the held ones: a consumer changing them changes no snapshot taken before
      ((acc.result() as unknown[])[0] as { a: unknown[] }).a.push('changed');
      expect(snapshot).to.deep.equal([0, [{ a: [1, 'x'] }, 2]]);
      expect(fed('collect', [Buffer.from('hi'), 3], [10]).snapshot()).to.deep.equal([0, ['aGk=', 3], [[[0], 'buffer']]]);
      expect(fed('first', [{ t: -0 }]).snapshot()).to.deep.equal([{ t: null }, [[[0, 't'], '-0']]]);
      expect(fed('last', []).snapshot()).to.deep.equal([]);
      expect(fed('last', [null]).snapshot()).to.deep.equal([null]);
    });
  });

  it('carries the compensation of a sum across a restore: 0.1 + 1e20 + 0.1, restored, - 1e20 is 0.2', () => {
    const b = restored(fed('sum', [0.1, 1e20, 0.1]), 'sum', []);
    b.add([-1e20]);
    expect(b.result()).to.equal(0.2);
  });

  describe('snapshots, one per function', () => {
    it('are compact', () => {
      expect(fed('count', [1, 2, 3]).snapshot()).to.equal(3);
      expect(fed('count_if', [true, false, true]).snapshot()).to.equal(2);
      expect(fed('sum', [1, 2n ** 60n]).snapshot()).to.deep.equal([1, 2n ** 60n]);
      expect(fed('sum', [1, 0.5]).snapshot()).to.deep.equal([1, 0n, 0.5, 0]);
      expect(fed('min', []).snapshot()).to.equal(null);
      expect(fed('min', [3, 5n]).snapshot()).to.equal(3);
      expect(fed('max', [3, 5n]).snapshot()).to.equal('5n');
      expect(fed('max', [-0]).snapshot()).to.equal('-0');
      expect(fed('mean', [1, 2]).snapshot()).to.deep.equal([2, 1.5, 0.5]);
      expect(fed('distinct', ['a', 1, NaN, [1]]).snapshot()).to.deep.equal([['a', 1], ['[1]'], ['NaN']]);
      expect(fed('percentile', [], [0.5]).snapshot()).to.deep.equal([0, 0, 'Infinity', '-Infinity', true, '']);
      // the page of [1, 2) (octave 1023: ff 07): bucket 0 holds 1 (token 2), 511 empty ones (token 1021: fd 07), bucket 512 (1.5) holds 1, 511 empty ones
      const p = fed('percentile', [1, 1.5, 0], [0.5]).snapshot() as unknown[];
      expect(p.slice(0, 5)).to.deep.equal([3, 1, 0, 1.5, false]);
      expect([...Buffer.from(p[5] as string, 'base64')]).to.deep.equal([0xff, 0x07, 2, 0xfd, 0x07, 2, 0xfd, 0x07]);
    });

    it('of distinct as a sketch: its 16384 registers as base64', () => {
      const acc = fed(
        'distinct',
        Array.from({ length: EXACT_LIMIT + 1 }, (_, i) => i),
      );
      const snapshot = acc.snapshot();
      expect(snapshot).to.be.a('string');
      expect(Buffer.from(snapshot as string, 'base64').length).to.equal(16384);
      expect(restored(acc, 'distinct', []).meta?.()).to.deep.equal({ estimated: true });
    });
  });

  describe('a snapshot it cannot read', () => {
    const cases: [name: string, constants: unknown[], snapshot: unknown, message: string][] = [
      ['count', [], -1, 'count: cannot restore its state: the snapshot: expected a count (an integer >= 0), got int -1'],
      ['count_if', [], 1.5, 'count_if: cannot restore its state: the snapshot: expected a count (an integer >= 0), got double 1.5'],
      ['sum', [], [1, 2, 3], 'sum: cannot restore its state: the snapshot: expected a list of 2 or 4 items, got 3'],
      ['sum', [], [0.5, 0n], 'sum: cannot restore its state: small (the first item): expected an integer, got double 0.5'],
      ['sum', [], [2n ** 60n, 0n], 'sum: cannot restore its state: small (the first item): 1152921504606846976 is not a safe integer'],
      [
        'sum',
        [],
        [0, 0, 'x', 0],
        'sum: cannot restore its state: doubles (the third item): expected a number (or "-0", "NaN", "Infinity", "-Infinity"), got "x"',
      ],
      ['min', [], 'NaN', 'min: cannot restore its state: the snapshot: NaN is not a value min can hold'],
      [
        'max',
        [],
        [1],
        'max: cannot restore its state: the snapshot: expected a number, a bigint or its tag ("-0", "NaN", "Infinity", "-Infinity", "<digits>n"), got a list of 1',
      ],
      ['mean', [], [1, 2], 'mean: cannot restore its state: the snapshot: expected a list of 3 items, got 2'],
      ['stddev', [], [-1, 0, 0], 'stddev: cannot restore its state: n (the first item): expected a count (an integer >= 0), got int -1'],
      [
        'variance',
        [],
        [1, 0, null],
        'variance: cannot restore its state: m2 (the third item): expected a number (or "-0", "NaN", "Infinity", "-Infinity"), got null',
      ],
      ['percentile', [0.5], [1, 0, 1, 1, true], 'percentile: cannot restore its state: the snapshot: expected a list of 6 items, got 5'],
      [
        'percentile',
        [0.5],
        [2, 0, 1, 1, true, 'AAI='],
        'percentile: cannot restore its state: pages (the sixth item): octave 0 ends after 1 of its 1024 buckets',
      ],
      ['percentile', [0.5], [1, 0, 1, 1, true, '!!'], 'percentile: cannot restore its state: pages (the sixth item): is not base64'],
      [
        'percentile',
        [0.5],
        [0, 1, 'Infinity', '-Infinity', true, ''],
        'percentile: cannot restore its state: the snapshot: n is 0 but the buckets and zeros hold 1',
      ],
      ['percentile', [0.5], [1, 1, 5, 1, true, ''], 'percentile: cannot restore its state: the snapshot: min 5 and max 1 do not fit n 1'],
      ['distinct', [], [['a', 'a'], []], 'distinct: cannot restore its state: the snapshot: a value listed twice'],
      ['distinct', [], [[{}], []], 'distinct: cannot restore its state: plain (the first item): map is not a value the exact set holds as itself'],
      ['distinct', [], [[], [1]], 'distinct: cannot restore its state: composite (the second item): expected a string, got int 1'],
      [
        'distinct',
        [],
        [[], [], ['nan']],
        'distinct: cannot restore its state: non-finite (the third item): expected "NaN", "Infinity" or "-Infinity", got "nan"',
      ],
      ['distinct', [], Buffer.alloc(10).toString('base64'), 'distinct: cannot restore its state: the sketch: expected 16384 registers, got 10'],
      [
        'distinct',
        [],
        Buffer.alloc(16384, 34).toString('base64'),
        'distinct: cannot restore its state: the sketch: a register of 34, above the largest rank 33',
      ],
      ['first', [], [1, 2, 3], 'first: cannot restore its state: the snapshot: expected a list of 0, 1 or 2 items, got 3'],
      ['last', [], [{ a: 1 }, [[[0, 'b'], '-0']]], 'last: cannot restore its state: the value patch [[0,"b"],"-0"]: no "b" at step 2 of the path'],
      [
        'last',
        [],
        [1, [[[0], 'huh']]],
        'last: cannot restore its state: the value patch [[0],"huh"]: expected a number, a bigint or its tag ("-0", "NaN", "Infinity", "-Infinity", "<digits>n"), got "huh"',
      ],
      ['collect', [2], [0, [1, 2, 3]], 'collect: cannot restore its state: values (the second item): 3 values, more than the limit 2'],
      ['collect', [2], [-1, []], 'collect: cannot restore its state: dropped (the first item): expected a count (an integer >= 0), got int -1'],
      [
        'collect',
        [2],
        [0, [1], [[[0, 5n], 'buffer']]],
        'collect: cannot restore its state: values (the second item) patch [[0,5],"buffer"]: no 5 at step 2 of the path',
      ],
      [
        'collect',
        [2],
        [0, [1], [[[0], 'buffer']]],
        'collect: cannot restore its state: values (the second item) patch [[0],"buffer"]: expected a string, got int 1',
      ],
    ];
    for (const [name, constants, snapshot, message] of cases) {
      it(`${name}: ${message.slice(message.indexOf(': ', name.length + 2) + 2)}`, () => {
        expect(thrown(() => accumulator(name, constants).restore(snapshot))).to.equal(message);
      });
    }
  });
});
