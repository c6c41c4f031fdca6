/**
 * Adds per second of each aggregate function (src/pipeline/aggregate), each
 * beside a raw hand-written loop doing the same computation on the same
 * values in the same run, and the percentile's and distinct's measured
 * errors. Prints figures, asserts nothing.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/aggregate.js [rounds, default 5]
 *
 * One "window" is a fresh accumulator fed WINDOW values (each already wrapped
 * in its one-element argument list, as the operator passes them) and read
 * once. Each row is measured `rounds` times, the rows taking turns, for about
 * 0.2 s each time; the median is printed. Values are drawn from a fixed-seed
 * generator, so every run measures the same data.
 */
import { build } from 'hdr-histogram-js';
import { AGGREGATE_FUNCTIONS, type Accumulator } from '../src/pipeline/aggregate/functions';
import { PERCENTILE_RELATIVE_ERROR } from '../src/pipeline/aggregate/percentile';
import { DISTINCT_STANDARD_ERROR } from '../src/pipeline/aggregate/distinct';

const rounds = Number(process.argv[2] ?? 5);
const SLICE_NS = 200_000_000n;
const WINDOW = 10_000;

/** xorshift32 with a fixed seed: the same values every run */
let state = 0x2545f491;
function random(): number {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 2 ** 32;
}

/** latencies in ms, log-normal around 20 ms (fractions, a long tail) */
const latencies = Array.from({ length: WINDOW }, () => Math.exp(3 + 1.2 * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())));
const integers = Array.from({ length: WINDOW }, () => Math.floor(random() * 1_000_000));
const bools = integers.map((i) => i % 3 === 0);
const fewUsers = integers.map((i) => `user-${i % 500}`); // 500 distinct: the exact set
const manyUsers = integers.map((i) => `user-${i}`); // ~10000 distinct: HyperLogLog past 1000

interface Row {
  name: string;
  /** one window: returns something so the work cannot be optimised away */
  window: () => unknown;
  samples: number[];
}

let sink = 0;

/** Nanoseconds per added value over one slice of `row`. */
function slice(row: Row): number {
  const start = process.hrtime.bigint();
  let windows = 0;
  let now = start;
  while (now - start < SLICE_NS) {
    sink ^= row.window() === undefined ? 1 : 0;
    windows++;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / (windows * WINDOW);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

/** A row feeding the library's accumulator. */
function library(label: string, name: string, values: readonly unknown[], constants: readonly unknown[] = []): Row {
  const make: () => Accumulator = AGGREGATE_FUNCTIONS.get(name)!.prepare(constants);
  const args = values.map((v) => [v]);
  return {
    name: label,
    window: () => {
      const acc = make();
      for (const a of args) acc.add(a);
      return acc.result();
    },
    samples: [],
  };
}

const raw = (name: string, window: () => unknown): Row => ({ name: `  raw: ${name}`, window, samples: [] });

/** distinct's baseline: the values into a Set as they are (exact, unbounded memory) */
const rawSet = (values: readonly unknown[]): Row =>
  raw('Set.add(x)', () => {
    const s = new Set<unknown>();
    for (const v of values) s.add(v);
    return s.size;
  });

function rows(): Row[] {
  return [
    library('count()', 'count', integers),
    raw('n++', () => {
      let n = 0;
      for (const _ of integers) n++;
      return n;
    }),
    library('count_if(cond)', 'count_if', bools),
    raw('if (b === true) n++', () => {
      let n = 0;
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare -- the baseline's test is count_if's own (cond === true), as the row's label says
      for (const b of bools) if (b === true) n++;
      return n;
    }),
    library('sum(int)', 'sum', integers),
    raw('s += x', () => {
      let s = 0;
      for (const x of integers) s += x;
      return s;
    }),
    library('sum(double)', 'sum', latencies),
    raw('s += x (uncompensated)', () => {
      let s = 0;
      for (const x of latencies) s += x;
      return s;
    }),
    library('max(double)', 'max', latencies),
    raw('if (x > m) m = x', () => {
      let m = -Infinity;
      for (const x of latencies) if (x > m) m = x;
      return m;
    }),
    library('variance(double)', 'variance', latencies),
    raw('Welford inline', () => {
      let n = 0;
      let mean = 0;
      let m2 = 0;
      for (const x of latencies) {
        n++;
        const d = x - mean;
        mean += d / n;
        m2 += d * (x - mean);
      }
      return m2 / n;
    }),
    library('percentile(double, 0.99)', 'percentile', latencies, [0.99]),
    raw('push, sort, pick (exact)', () => {
      const a: number[] = [];
      for (const x of latencies) a.push(x);
      a.sort((x, y) => x - y);
      return a[Math.ceil(0.99 * a.length) - 1];
    }),
    raw('hdr-histogram-js, µs integers, 3 digits', () => {
      const h = build({ lowestDiscernibleValue: 1, highestTrackableValue: 2 ** 40, numberOfSignificantValueDigits: 3, useWebAssembly: false });
      for (const x of latencies) h.recordValue(Math.round(x * 1000));
      return h.getValueAtPercentile(99) / 1000;
    }),
    library('distinct(string), 500 distinct (exact set)', 'distinct', fewUsers),
    rawSet(fewUsers),
    library('distinct(string), ~10000 distinct (HyperLogLog)', 'distinct', manyUsers),
    rawSet(manyUsers),
    library('distinct(int), ~10000 distinct (HyperLogLog)', 'distinct', integers),
    rawSet(integers),
    library('last(x)', 'last', latencies),
    raw('v = x', () => {
      let v: unknown = null;
      for (const x of latencies) v = x;
      return v;
    }),
    library('collect(x, 100)', 'collect', latencies, [100]),
    raw('push while < 100, else dropped++', () => {
      const a: number[] = [];
      let dropped = 0;
      for (const x of latencies)
        if (a.length < 100) a.push(x);
        else dropped++;
      return a.length + dropped;
    }),
  ];
}

/** The largest relative error of percentile over many quantiles of log-normal and uniform data. */
function percentileError(): number {
  let worst = 0;
  for (const data of [latencies, integers.map((i) => i / 7), integers.map((i) => -i * 1e-6)]) {
    const sorted = [...data].sort((a, b) => a - b);
    for (let k = 0; k <= 1000; k++) {
      const acc = AGGREGATE_FUNCTIONS.get('percentile')!.prepare([k / 1000])();
      for (const x of data) acc.add([x]);
      const want = sorted[Math.max(1, Math.ceil((k * sorted.length) / 1000 - 1e-9)) - 1];
      if (want !== 0) worst = Math.max(worst, Math.abs((acc.result() as number) - want) / Math.abs(want));
    }
  }
  return worst;
}

/** Bias and root-mean-square relative error of distinct over `trials` sets of `n` distinct strings. */
function distinctError(n: number, trials: number): { bias: number; rms: number } {
  let sum = 0;
  let squares = 0;
  for (let t = 0; t < trials; t++) {
    const acc = AGGREGATE_FUNCTIONS.get('distinct')!.prepare([])();
    for (let i = 0; i < n; i++) acc.add([`${t}/${i}`]);
    const e = ((acc.result() as number) - n) / n;
    sum += e;
    squares += e * e;
  }
  return { bias: sum / trials, rms: Math.sqrt(squares / trials) };
}

function main(): void {
  const all = rows();
  for (const r of all) slice(r); // warm-up
  for (let k = 0; k < rounds; k++) for (const r of all) r.samples.push(slice(r));
  console.log(`windows of ${WINDOW} values, median of ${rounds} slices of 0.2 s; raw rows do the same computation by hand`);
  for (const r of all) {
    const ns = median(r.samples);
    console.log(`${r.name.padEnd(50)} ${(1e9 / ns / 1e6).toFixed(1).padStart(7)} M adds/s  ${ns.toFixed(1).padStart(6)} ns/add`);
  }
  const worst = percentileError();
  console.log(
    `percentile: largest relative error over q = 0, 0.001, ..., 1 on 3 data sets: ${(worst * 100).toFixed(4)} % (bound ${(PERCENTILE_RELATIVE_ERROR * 100).toFixed(4)} %)`,
  );
  for (const n of [2_000, 20_000, 200_000]) {
    const { bias, rms } = distinctError(n, n > 100_000 ? 10 : 30);
    console.log(
      `distinct of ${n} strings: bias ${(bias * 100).toFixed(2)} %, rms error ${(rms * 100).toFixed(2)} % (standard error ${(DISTINCT_STANDARD_ERROR * 100).toFixed(2)} %)`,
    );
  }
  if (sink === -1) console.log(sink);
}

main();
