/**
 * The value model of compiled CEL (see compile.ts): an event's JSON values
 * are CEL values as they are, so nothing is converted before an expression
 * runs. The rules are those of `toCel` (src/pipeline/cel/engine.ts),
 * which the interpreter sees:
 *
 * - a `number` that is a safe integer is a CEL `int`; any other `number`
 *   (1.5, 1e20, NaN) is a `double`; a `bigint` is an `int`;
 * - a `double` with an integral value that a computation or a literal makes
 *   (`2.0`, `1.5 + 1.5`) is boxed as `Dbl`, so it is not mistaken for an int;
 * - a `uint` is a `U64`; a map literal is a JS `Map`; a JSON object is a map
 *   with string keys; an array is a list; a Uint8Array is bytes.
 *
 * An int is kept a `number` while it is a safe integer and becomes a `bigint`
 * beyond; every int result is checked against the 64-bit range.
 *
 * Two ways out besides a value: `CelEvalError`, an evaluation error (what the
 * interpreter reports as an error value), and `BAIL`, thrown where a value
 * combination is outside what this module implements (an index by a double,
 * a timestamp from some codec…): the caller then evaluates the expression
 * with the interpreter, so an unusual input never changes the result.
 */

import { present as presentOrThrow } from '../../core/errors';
import { setOwn } from '../../codecs/integers';

/** An integral double (`2.0`): a bare number that is a safe integer would be an int. */
export class Dbl {
  constructor(readonly d: number) {}
}

/** A CEL uint, 0 ≤ v < 2^64. */
export class U64 {
  constructor(readonly v: bigint) {}
}

/** An evaluation error: the event goes to `err` with this message. */
export class CelEvalError extends Error {}

/** Thrown where this module does not decide; the interpreter does. */
export class Bail {
  constructor(readonly why: string) {}
}

export function bail(why: string): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- a signal to the engine, always caught there, not an error: it captures no stack
  throw new Bail(why);
}

const INT_MIN = -(2n ** 63n);
const INT_MAX = 2n ** 63n - 1n;
const UINT_MAX = 2n ** 64n - 1n;
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

export const enum Kind {
  Int,
  Uint,
  Double,
  String,
  Bool,
  Null,
  Bytes,
  List,
  Map,
  Other,
}

const KIND_NAMES = ['int', 'uint', 'double', 'string', 'bool', 'null_type', 'bytes', 'list', 'map', 'unknown'];

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

export function kindOf(v: unknown): Kind {
  switch (typeof v) {
    case 'number':
      return Number.isSafeInteger(v) ? Kind.Int : Kind.Double;
    case 'bigint':
      return Kind.Int;
    case 'string':
      return Kind.String;
    case 'boolean':
      return Kind.Bool;
    case 'object':
      if (v === null) return Kind.Null;
      if (Array.isArray(v)) return Kind.List;
      if (v instanceof Dbl) return Kind.Double;
      if (v instanceof U64) return Kind.Uint;
      if (v instanceof Uint8Array) return Kind.Bytes;
      if (v instanceof Map) return Kind.Map;
      if (isPlainObject(v)) return Kind.Map;
      return Kind.Other;
    default:
      return Kind.Other;
  }
}

export function kindName(v: unknown): string {
  return KIND_NAMES[kindOf(v)];
}

function noOverload(fn: string, ...args: unknown[]): CelEvalError {
  return new CelEvalError(`found no matching overload for '${fn}' applied to '(${args.map(kindName).join(', ')})'`);
}

/** Values the interpreter never sees from JSON (a Date from some codec, undefined): the interpreter decides. */
function checkKnown(...args: unknown[]): void {
  for (const a of args) if (kindOf(a) === Kind.Other) bail('a value of an unknown kind');
}

/** A double result: boxed when integral, so it stays a double. */
export function dbl(d: number): number | Dbl {
  return Number.isSafeInteger(d) ? new Dbl(d) : d;
}

/** An int result: range-checked, a number while safe. */
export function int(b: bigint, op: string): number | bigint {
  if (b < INT_MIN || b > INT_MAX) throw new CelEvalError(`int overflow during ${op}`);
  return b >= SAFE_MIN && b <= SAFE_MAX ? Number(b) : b;
}

function uint(b: bigint, op: string): U64 {
  if (b < 0n || b > UINT_MAX) throw new CelEvalError(`uint overflow during ${op}`);
  return new U64(b);
}

/** An int operand as a bigint; a bigint beyond 64 bits (from a codec) is for the interpreter. */
function big(v: unknown): bigint {
  if (typeof v === 'number') return BigInt(v);
  const b = v as bigint;
  if (b < INT_MIN || b > INT_MAX) bail('an integer beyond 64 bits');
  return b;
}

function dval(v: unknown): number {
  return typeof v === 'number' ? v : (v as Dbl).d;
}

type Arith = (a: bigint, b: bigint) => bigint;

/** The int, uint and double cases of an arithmetic operator; strings, bytes and lists are the caller's. */
function arith(op: string, a: unknown, b: unknown, onInt: Arith, onDouble: ((x: number, y: number) => number) | null): unknown {
  checkKnown(a, b);
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka !== kb) throw noOverload(op, a, b);
  if (ka === Kind.Int) return int(onInt(big(a), big(b)), op);
  if (ka === Kind.Uint) return uint(onInt((a as U64).v, (b as U64).v), op);
  if (ka === Kind.Double && onDouble !== null) return dbl(onDouble(dval(a), dval(b)));
  throw noOverload(op, a, b);
}

export function add(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number' && Number.isSafeInteger(a) && Number.isSafeInteger(b)) {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r;
  } else if (typeof a === 'string' && typeof b === 'string') {
    return a + b;
  }
  const ka = kindOf(a);
  if (ka === Kind.String && typeof b === 'string') return (a as string) + b;
  if (ka === Kind.List && Array.isArray(b)) return [...(a as unknown[]), ...(b as unknown[])];
  if (ka === Kind.Bytes && b instanceof Uint8Array) {
    const out = new Uint8Array((a as Uint8Array).length + b.length);
    out.set(a as Uint8Array);
    out.set(b, (a as Uint8Array).length);
    return out;
  }
  return arith(
    '_+_',
    a,
    b,
    (x, y) => x + y,
    (x, y) => x + y,
  );
}

export function sub(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number' && Number.isSafeInteger(a) && Number.isSafeInteger(b)) {
    const r = a - b;
    if (Number.isSafeInteger(r)) return r + 0;
  }
  return arith(
    '_-_',
    a,
    b,
    (x, y) => x - y,
    (x, y) => x - y,
  );
}

export function mul(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number' && Number.isSafeInteger(a) && Number.isSafeInteger(b)) {
    // a rounded product is safe only when the exact one is
    const r = a * b;
    if (Number.isSafeInteger(r)) return r + 0;
  }
  return arith(
    '_*_',
    a,
    b,
    (x, y) => x * y,
    (x, y) => x * y,
  );
}

export function div(a: unknown, b: unknown): unknown {
  // small ints: the double quotient of two 32-bit values truncates to the exact integer quotient
  if (typeof a === 'number' && typeof b === 'number' && (a | 0) === a && (b | 0) === b && b !== 0) return Math.trunc(a / b) + 0;
  const ka = kindOf(a);
  if ((ka === Kind.Int || ka === Kind.Uint) && kindOf(b) === ka) {
    const y = ka === Kind.Int ? big(b) : (b as U64).v;
    if (y === 0n) throw new CelEvalError(`${KIND_NAMES[ka]} divide by zero`);
    if (ka === Kind.Int && y === -1n && big(a) === INT_MIN) throw new CelEvalError('int overflow during divide by -1');
  }
  return arith(
    '_/_',
    a,
    b,
    (x, y) => x / y,
    (x, y) => x / y,
  );
}

export function mod(a: unknown, b: unknown): unknown {
  // safe ints: JavaScript's % is exact and, as CEL's, takes the dividend's sign (+ 0 turns -0 into 0)
  if (typeof a === 'number' && typeof b === 'number' && Number.isSafeInteger(a) && Number.isSafeInteger(b) && b !== 0) return (a % b) + 0;
  const ka = kindOf(a);
  if ((ka === Kind.Int || ka === Kind.Uint) && kindOf(b) === ka) {
    const y = ka === Kind.Int ? big(b) : (b as U64).v;
    if (y === 0n) throw new CelEvalError(`${KIND_NAMES[ka]} modulus by zero`);
  }
  return arith('_%_', a, b, (x, y) => x % y, null);
}

export function neg(a: unknown): unknown {
  if (typeof a === 'number') return Number.isSafeInteger(a) ? -a + 0 : -a;
  if (typeof a === 'bigint') return int(-big(a), '-_');
  if (a instanceof Dbl) return new Dbl(-a.d);
  checkKnown(a);
  throw noOverload('-_', a);
}

/** The numeric value as the interpreter holds it (number for double, bigint or number for int, bigint for uint). */
function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (v instanceof Dbl) return v.d;
  if (v instanceof U64) return v.v;
  return undefined;
}

/** CEL equality: numbers across int, uint and double; other kinds only with their own kind; never an error. */
export function equals(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a);
  if (typeof a === 'string' || typeof b === 'string' || typeof a === 'boolean' || typeof b === 'boolean') return false;
  if (a === null || b === null) return false;
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) {
    // == on purpose: number == bigint compares the exact values, as the interpreter does
    return na !== undefined && nb !== undefined && na == nb;
  }
  checkKnown(a, b);
  const ka = kindOf(a);
  if (ka !== kindOf(b)) return false;
  if (ka === Kind.Bytes) return bytesEqual(a as Uint8Array, b as Uint8Array);
  if (ka === Kind.List) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!equals(x[i], y[i])) return false;
    return true;
  }
  return mapsEqual(a as object, b as object);
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function mapsEqual(a: object, b: object): boolean {
  // maps with non-string keys compare by numeric key equality in the interpreter: leave those to it
  const x = stringKeyed(a);
  const y = stringKeyed(b);
  if (x.size !== y.size) return false;
  for (const [k, v] of x) {
    if (!y.has(k)) return false;
    if (!equals(v, y.get(k))) return false;
  }
  return true;
}

function stringKeyed(m: object): Map<string, unknown> {
  if (m instanceof Map) {
    for (const k of m.keys()) if (typeof k !== 'string') bail('a map with non-string keys');
    return m as Map<string, unknown>;
  }
  return new Map(Object.entries(m));
}

/**
 * CEL ordering: ints, uints and doubles across kinds (a double against an
 * int or uint compares as doubles, as the interpreter does), strings,
 * bools, bytes. Returns -1, 0 or 1, NaN when unordered (a NaN operand).
 */
export function compare(op: string, a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : a === b ? 0 : NaN;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  checkKnown(a, b);
  const ka = kindOf(a);
  const kb = kindOf(b);
  const numericKind = (k: Kind) => k === Kind.Int || k === Kind.Uint || k === Kind.Double;
  if (numericKind(ka) && numericKind(kb)) {
    let x = presentOrThrow(numeric(a), 'a number');
    let y = presentOrThrow(numeric(b), 'a number');
    if (ka === Kind.Int && kb === Kind.Int) {
      x = big(x);
      y = big(y);
    } else if (ka === Kind.Double || kb === Kind.Double) {
      x = Number(x);
      y = Number(y);
    }
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : NaN;
  }
  if (ka !== kb) throw noOverload(op, a, b);
  if (ka === Kind.String || ka === Kind.Bool) {
    const x = a as string | boolean;
    const y = b as string | boolean;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ka === Kind.Bytes) {
    const x = a as Uint8Array;
    const y = b as Uint8Array;
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    return Math.sign(x.length - y.length);
  }
  throw noOverload(op, a, b);
}

/** `x in container`: a list by equality, a map by key. */
export function contains(x: unknown, container: unknown): boolean {
  if (Array.isArray(container)) {
    if (typeof x === 'string') return container.includes(x);
    for (const e of container) if (equals(e, x)) return true;
    return false;
  }
  if (typeof x !== 'string') bail('`in` a map with a key that is not a string');
  if (kindOf(container) === Kind.Map) return hasField(container, x);
  checkKnown(container);
  throw noOverload('@in', x, container);
}

/** `container[key]`: a list by int, a map by string key. */
export function index(container: unknown, key: unknown): unknown {
  if (Array.isArray(container)) {
    if (kindOf(key) !== Kind.Int) bail('a list index that is not an int');
    const i = typeof key === 'number' ? key : Number(key);
    if (i < 0 || i >= container.length) throw new CelEvalError(`index ${String(key)} out of bounds [0, ${container.length})`);
    return present(container[i]);
  }
  if (typeof key !== 'string') bail('a map key that is not a string');
  return field(container, key);
}

/** `value.name`: a map's entry; a missing one is an error. */
export function field(value: unknown, name: string): unknown {
  if (value instanceof Map) {
    if (!value.has(name)) throw new CelEvalError(`no such key: ${name}`);
    return present(value.get(name));
  }
  if (kindOf(value) !== Kind.Map) bail('a field of something other than a map');
  if (!Object.hasOwn(value as object, name)) throw new CelEvalError(`field not found: ${name}`);
  return present((value as Record<string, unknown>)[name]);
}

/**
 * `has(value.name)` and `"name" in value`: as in the interpreter, an entry
 * of a JSON object whose value is null counts as absent (its proto-field
 * view), while reading it gives null.
 */
export function hasField(value: unknown, name: string): boolean {
  if (value instanceof Map) {
    if (value.get(name) === null) bail('a null entry of a map literal');
    return value.has(name);
  }
  if (kindOf(value) !== Kind.Map) bail('has() on something other than a map');
  return Object.hasOwn(value as object, name) && (value as Record<string, unknown>)[name] !== null;
}

function present(v: unknown): unknown {
  if (v === undefined) bail('an undefined value');
  return v;
}

/** size() of a string (in code points), bytes, list or map. */
export function size(v: unknown): number {
  if (typeof v === 'string') {
    let n = 0;
    for (const _ of v) n++;
    return n;
  }
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length;
  if (v instanceof Map) return v.size;
  if (kindOf(v) === Kind.Map) return Object.keys(v as object).length;
  checkKnown(v);
  throw noOverload('size', v);
}

export function asBool(fn: string, v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  checkKnown(v);
  throw noOverload(fn, v);
}

export function asString(fn: string, v: unknown): string {
  if (typeof v === 'string') return v;
  checkKnown(v);
  throw noOverload(fn, v);
}

/**
 * A result as the rest of eddy takes it (what `fromCel` makes of the
 * interpreter's): ints as numbers while exact, else bigint; doubles as
 * numbers; lists as arrays; maps as plain objects (new ones: a result never
 * shares structure with the event).
 */
export function toJson(v: unknown): unknown {
  switch (typeof v) {
    case 'number':
      // a bare -0 is an int (0): only a boxed double keeps its sign
      return v === 0 ? 0 : v;
    case 'bigint':
      return v >= SAFE_MIN && v <= SAFE_MAX ? Number(v) : v;
    case 'object':
      if (v === null || v instanceof Uint8Array) return v;
      if (v instanceof Dbl) return v.d;
      if (v instanceof U64) return toJson(v.v);
      if (Array.isArray(v)) return v.map(toJson);
      if (v instanceof Map) {
        const out: Record<string, unknown> = {};
        for (const [k, x] of v) setOwn(out, String(toJson(k)), toJson(x));
        return out;
      }
      if (isPlainObject(v)) {
        const out: Record<string, unknown> = {};
        for (const k of Object.keys(v)) setOwn(out, k, toJson(v[k]));
        return out;
      }
      return bail('a result of an unknown kind');
    default:
      return v;
  }
}

/*
 * Conversions, as the interpreter implements them (@bufbuild/cel std/cast):
 * range errors for int and uint; a string is read as JavaScript's BigInt()
 * and Number() read it (so `int(" 12 ")` is 12 and `double("x")` is NaN in
 * both paths: the compiled path never disagrees with the interpreter).
 */
const INT_MIN_D = Number(INT_MIN);
const INT_MAX_D = Number(INT_MAX);

function parseBig(fn: string, s: string): bigint {
  try {
    return BigInt(s);
  } catch {
    throw new CelEvalError(`${fn}: cannot convert string '${s}'`);
  }
}

export function toInt(x: unknown): number | bigint {
  switch (kindOf(x)) {
    case Kind.Int:
      return typeof x === 'bigint' ? int(big(x), 'type conversion') : (x as number);
    case Kind.Uint:
      return int((x as U64).v, 'type conversion');
    case Kind.Double: {
      const d = dval(x);
      // compared as doubles: 2^63 itself (the double nearest INT_MAX) is out of range
      if (Number.isFinite(d) && d > INT_MIN_D && d < INT_MAX_D) return int(BigInt(Math.trunc(d)), 'type conversion');
      throw new CelEvalError('int overflow during type conversion');
    }
    case Kind.String:
      return int(parseBig('int', x as string), 'type conversion');
    default:
      checkKnown(x);
      throw noOverload('int', x);
  }
}

export function toUint(x: unknown): U64 {
  switch (kindOf(x)) {
    case Kind.Uint:
      return x as U64;
    case Kind.Int:
      return uint(big(x), 'type conversion');
    case Kind.Double: {
      const d = dval(x);
      // the untruncated value is tested against 0: uint(-0.5) is an error
      if (Number.isFinite(d) && d >= 0) return uint(BigInt(Math.trunc(d)), 'type conversion');
      throw new CelEvalError('uint overflow during type conversion');
    }
    case Kind.String:
      return uint(parseBig('uint', x as string), 'type conversion');
    default:
      checkKnown(x);
      throw noOverload('uint', x);
  }
}

export function toDouble(x: unknown): number | Dbl {
  switch (kindOf(x)) {
    case Kind.Double:
      return x as number | Dbl;
    case Kind.Int:
      return dbl(Number(x));
    case Kind.Uint:
      return dbl(Number((x as U64).v));
    case Kind.String:
      return dbl(Number(x));
    default:
      checkKnown(x);
      throw noOverload('double', x);
  }
}

const utf8 = new TextDecoder(undefined, { fatal: true });
const utf8Encoder = new TextEncoder();

export function toStr(x: unknown): string {
  switch (kindOf(x)) {
    case Kind.String:
      return x as string;
    case Kind.Bool:
    case Kind.Int:
      return String(x);
    case Kind.Uint:
      return String((x as U64).v);
    case Kind.Double:
      return String(dval(x));
    case Kind.Bytes:
      try {
        return utf8.decode(x as Uint8Array);
      } catch {
        throw new CelEvalError('failed to decode bytes as string: invalid UTF-8');
      }
    default:
      checkKnown(x);
      throw noOverload('string', x);
  }
}

const BOOL_STRINGS: Record<string, boolean> = {
  true: true,
  True: true,
  TRUE: true,
  t: true,
  '1': true,
  false: false,
  False: false,
  FALSE: false,
  f: false,
  '0': false,
};

export function toBool(x: unknown): boolean {
  if (typeof x === 'boolean') return x;
  if (typeof x === 'string') {
    const b = Object.hasOwn(BOOL_STRINGS, x) ? BOOL_STRINGS[x] : undefined;
    if (b === undefined) throw new CelEvalError(`unable to convert string '${x}' to bool`);
    return b;
  }
  checkKnown(x);
  throw noOverload('bool', x);
}

export function toBytes(x: unknown): Uint8Array {
  if (x instanceof Uint8Array) return x;
  if (typeof x === 'string') return utf8Encoder.encode(x);
  checkKnown(x);
  throw noOverload('bytes', x);
}

/** The elements a comprehension iterates: a list's elements, a map's keys. */
export function iterable(range: unknown): readonly unknown[] {
  if (Array.isArray(range)) return range;
  if (range instanceof Map) return [...range.keys()];
  const k = kindOf(range);
  if (k === Kind.Map) return Object.keys(range as object);
  checkKnown(range);
  throw new CelEvalError(`type mismatch: iterable vs ${KIND_NAMES[k]}`);
}
