/**
 * distinct(x): how many distinct values. Exact (sets of the values) up to
 * EXACT_LIMIT distinct values, then a HyperLogLog sketch of 2^14 registers
 * (standard error 1.04 / sqrt(16384) = 0.81 %), read with Ertl's improved
 * raw estimator, which needs neither the bias tables of HyperLogLog++ nor a
 * switch to linear counting for small counts.
 */
import { isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import type { Accumulator, AggregateFunction } from './function';
import { describeValue, SnapshotReader } from './snapshot';
import { checkConstantCount, mergeable } from './values';

/** Up to this many distinct values the count is exact. */
export const EXACT_LIMIT = 1000;
const PRECISION = 14;
const REGISTERS = 1 << PRECISION;
/** the relative standard error of the sketch */
export const DISTINCT_STANDARD_ERROR = 1.04 / Math.sqrt(REGISTERS);
/** bits of the second hash word that give a register its rank */
const RANK_BITS = 32;

/**
 * The key a value is counted by. Values that CEL's equality calls equal
 * count once: numbers by numeric value whatever their type (1, 1.0, 1n and
 * a uint 1 are one value; -0 is 0), so an integer-valued double and the
 * bigint of the same integer agree; a string is never a number ("1" is not
 * 1). Lists by their elements in order, maps by their entries in any order,
 * each element by the same rules.
 */
export function canonicalKey(value: unknown): string {
  // top level: a one-letter tag keeps the kinds apart without quoting strings (the common case stays cheap)
  if (typeof value === 'string') return `s${value}`;
  return nested(value);
}

function nested(value: unknown): string {
  switch (typeof value) {
    case 'number':
      // integers (of any magnitude) as their exact decimal, as a bigint prints; other doubles in their shortest round-trip form
      return Number.isInteger(value) && !Number.isSafeInteger(value) ? BigInt(value).toString() : String(value);
    case 'bigint':
      return value.toString();
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'null';
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(nested).join(',')}]`;
  if (value instanceof Uint8Array) return `b${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}`;
  if (isCelUint(value)) return value.value.toString();
  if (isCelList(value)) return `[${[...value].map(nested).join(',')}]`;
  if (isCelMap(value)) return entries([...value.entries()].map(([k, v]) => [nested(k), v]));
  if (value instanceof Map) return entries([...value.entries()].map(([k, v]) => [nested(k), v]));
  return entries(Object.entries(value as object).map(([k, v]) => [JSON.stringify(k), v]));
}

function entries(pairs: [string, unknown][]): string {
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `{${pairs.map(([k, v]) => `${k}:${nested(v)}`).join(',')}}`;
}

/** The two 32-bit words of the last `hash64` (module state: no array per value). */
let hashHigh = 0;
let hashLow = 0;

/**
 * A 64-bit hash of a string in two 32-bit lanes: each UTF-16 unit is mixed
 * into both lanes with different multipliers, then each lane takes in the
 * other and is finished with murmur3's avalanche step, so every input bit
 * reaches every output bit of both words.
 */
function hash64(s: string): void {
  let a = 0x9e3779b9 ^ s.length;
  let b = 0x7f4a7c15 ^ Math.imul(s.length, 0x85ebca6b);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0xcc9e2d51);
    a = (a << 15) | (a >>> 17);
    b = Math.imul(b ^ c, 0x1b873593);
    b = (b << 13) | (b >>> 19);
    b = (Math.imul(b, 5) + 0xe6546b64) | 0;
  }
  a = avalanche(a ^ Math.imul(b, 0x27d4eb2d));
  b = avalanche(b ^ Math.imul(a, 0x165667b1));
  hashHigh = a >>> 0;
  hashLow = b >>> 0;
}

function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** HyperLogLog: the register is the hash's top PRECISION bits, its rank the position of the first 1 in the other word. */
export class HyperLogLog {
  readonly registers = new Uint8Array(REGISTERS);

  addKey(key: string): void {
    hash64(key);
    const index = hashHigh >>> (32 - PRECISION);
    const rank = Math.clz32(hashLow) + 1; // 1 … 33 (33: the word is all zeros)
    if (rank > this.registers[index]) this.registers[index] = rank;
  }

  union(other: HyperLogLog): void {
    const mine = this.registers;
    const theirs = other.registers;
    for (let i = 0; i < REGISTERS; i++) if (theirs[i] > mine[i]) mine[i] = theirs[i];
  }

  /** Ertl (2017), "New cardinality estimation algorithms for HyperLogLog sketches", the improved raw estimator. */
  estimate(): number {
    const histogram = new Float64Array(RANK_BITS + 2);
    for (let i = 0; i < REGISTERS; i++) histogram[this.registers[i]]++;
    const m = REGISTERS;
    let z = m * tau(1 - histogram[RANK_BITS + 1] / m);
    for (let k = RANK_BITS; k >= 1; k--) z = 0.5 * (z + histogram[k]);
    z += m * sigma(histogram[0] / m);
    return (m * m) / (2 * Math.LN2) / z;
  }
}

/** sigma(x) = x + sum over k >= 1 of x^(2^k) 2^(k-1); it diverges at 1 (all registers empty: the estimate is 0). */
function sigma(x: number): number {
  if (x === 1) return Infinity;
  let power = x;
  let weight = 1;
  let total = x;
  for (;;) {
    power *= power;
    const next = total + power * weight;
    if (next === total) return total;
    total = next;
    weight += weight;
  }
}

/** tau(x) = (1 - x - sum over k >= 1 of (1 - x^(2^-k))^2 2^-k) / 3. */
function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let root = x;
  let weight = 1;
  let total = 1 - x;
  for (;;) {
    root = Math.sqrt(root);
    weight *= 0.5;
    const next = total - (1 - root) * (1 - root) * weight;
    if (next === total) return total / 3;
    total = next;
  }
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * While exact: strings and numbers as themselves (a Set tells "1" from 1
 * and takes -0 as 0; a bigint or uint in the safe range comes in as its
 * number), everything else by its canonical key. Building no key for the
 * common values keeps an add close to a bare Set.add.
 */
interface Exact {
  plain: Set<string | number>;
  composite: Set<string>;
  sketch?: undefined;
}

/** Past EXACT_LIMIT: the sketch alone. */
interface Sketched {
  sketch: HyperLogLog;
  plain?: undefined;
  composite?: undefined;
}

type DistinctState = Exact | Sketched;

class Distinct implements Accumulator {
  /** the exact sets or the sketch, never both */
  state: DistinctState = { plain: new Set(), composite: new Set() };

  add(values: readonly unknown[]): void {
    const v = values[0];
    const state = this.state;
    if (state.sketch) return state.sketch.addKey(canonicalKey(v));
    if (typeof v === 'string' || (typeof v === 'number' && (Number.isSafeInteger(v) || !Number.isInteger(v)))) state.plain.add(v);
    else {
      const n = typeof v === 'bigint' ? v : isCelUint(v) ? v.value : undefined;
      if (n !== undefined && n >= MIN_SAFE && n <= MAX_SAFE) state.plain.add(Number(n));
      else state.composite.add(canonicalKey(v));
    }
    if (state.plain.size + state.composite.size > EXACT_LIMIT) this.toSketch(state);
  }

  /** Past EXACT_LIMIT: every key so far into a sketch, the sets dropped. */
  private toSketch(exact: Exact): HyperLogLog {
    const sketch = new HyperLogLog();
    for (const v of exact.plain) sketch.addKey(canonicalKey(v));
    for (const key of exact.composite) sketch.addKey(key);
    this.state = { sketch };
    return sketch;
  }

  result(): number {
    const state = this.state;
    return state.sketch ? Math.round(state.sketch.estimate()) : state.plain.size + state.composite.size;
  }

  meta(): Readonly<Record<string, unknown>> | undefined {
    return this.state.sketch ? { estimated: true } : undefined;
  }

  merge(other: Accumulator): void {
    const o = mergeable('distinct', Distinct, other).state;
    if (o.sketch) {
      const mine = this.state;
      if (mine.sketch) mine.sketch.union(o.sketch);
      else this.toSketch(mine).union(o.sketch);
      return;
    }
    for (const v of o.plain) this.add([v]);
    for (const key of o.composite) {
      const state = this.state;
      if (state.sketch) state.sketch.addKey(key);
      else {
        state.composite.add(key);
        if (state.plain.size + state.composite.size > EXACT_LIMIT) this.toSketch(state);
      }
    }
  }

  /**
   * While exact `[plain, composite]`, the two sets as lists; NaN and the
   * infinities (which `plain` holds as themselves and JSON cannot) go by name
   * in a third list, `[plain, composite, ["NaN", …]]`, never among the
   * strings of `plain`. As a sketch, its registers as base64 text.
   */
  snapshot(): unknown {
    const state = this.state;
    if (state.sketch) return Buffer.from(state.sketch.registers).toString('base64');
    const plain: (string | number)[] = [];
    const nonFinite: string[] = [];
    for (const v of state.plain) {
      if (typeof v === 'number' && !Number.isFinite(v)) nonFinite.push(String(v));
      else plain.push(v);
    }
    const composite = [...state.composite];
    return nonFinite.length === 0 ? [plain, composite] : [plain, composite, nonFinite];
  }

  restore(snapshot: unknown): void {
    const reader = new SnapshotReader('distinct');
    if (typeof snapshot === 'string') {
      const registers = reader.base64('the sketch', snapshot);
      if (registers.length !== REGISTERS) reader.fail('the sketch', `expected ${REGISTERS} registers, got ${registers.length}`);
      const highest = registers.reduce((a, b) => Math.max(a, b), 0);
      if (highest > RANK_BITS + 1) reader.fail('the sketch', `a register of ${highest}, above the largest rank ${RANK_BITS + 1}`);
      const sketch = new HyperLogLog();
      sketch.registers.set(registers);
      this.state = { sketch };
      return;
    }
    const [plainList, compositeList, nonFiniteList] = reader.list('the snapshot (a list while exact, else base64 text)', snapshot, [2, 3]);
    const plainItems = reader.list('plain (the first item)', plainList);
    const compositeItems = reader.list('composite (the second item)', compositeList);
    const nonFiniteItems = nonFiniteList === undefined ? [] : reader.list('non-finite (the third item)', nonFiniteList);
    const plain = new Set<string | number>();
    for (const v of plainItems) {
      // what add keeps as itself: strings, safe integers (never -0: a Set holds it as 0) and other finite doubles
      if (typeof v === 'string' || (typeof v === 'number' && !Object.is(v, -0) && (Number.isSafeInteger(v) || (Number.isFinite(v) && !Number.isInteger(v)))))
        plain.add(v);
      else reader.fail('plain (the first item)', `${describeValue(v)} is not a value the exact set holds as itself`);
    }
    for (const v of nonFiniteItems) {
      if (v !== 'NaN' && v !== 'Infinity' && v !== '-Infinity')
        reader.fail('non-finite (the third item)', `expected "NaN", "Infinity" or "-Infinity", got ${describeValue(v)}`);
      plain.add(Number(v));
    }
    const composite = new Set<string>();
    for (const key of compositeItems) composite.add(reader.string('composite (the second item)', key));
    const listed = plainItems.length + compositeItems.length + nonFiniteItems.length;
    if (plain.size + composite.size !== listed) reader.fail('the snapshot', 'a value listed twice');
    if (listed > EXACT_LIMIT) reader.fail('the snapshot', `${listed} values, more than the exact limit ${EXACT_LIMIT} (past it a sketch is written)`);
    this.state = { plain, composite };
  }
}

export const distinct: AggregateFunction = {
  name: 'distinct',
  eventArgs: 1,
  constants: [],
  description: `how many distinct values (1, 1.0 and an int 1 are one value, the string "1" another); exact up to ${EXACT_LIMIT}, then a HyperLogLog estimate with 0.81 % standard error; 0 when empty`,
  prepare(constants) {
    checkConstantCount('distinct', 1, [], 0, constants);
    return () => new Distinct();
  },
};
