/**
 * How an accumulator's state is written for a changelog and read back
 * (`Accumulator.snapshot` / `restore`, pipeline/state.ts): the pieces the
 * accumulators share, so every one writes a double, a bigint or a held value
 * the same way and fails on a bad snapshot with the same kind of message.
 *
 * A snapshot travels as eddy's JSON (`compactJson`, read back by
 * `parsePrecise`), which keeps every finite double (except -0) and every
 * integer exactly, but reads an integer literal within ±2^53 as a number
 * whatever it was written from, writes -0 as 0, NaN and the infinities as
 * null, bytes as a base64 string and leaves undefined out. What would not
 * come back as it was is written so that it does; the common values go as
 * they are.
 */
import { NUMBER_LIMIT, setOwn } from '../../codecs/integers';
import { compactJson } from '../../codecs/json/compact';
import { typeName } from './values';

/** Reads a snapshot's parts for one function; every failure names the function, the part and why. */
export class SnapshotReader {
  constructor(readonly fn: string) {}

  fail(part: string, why: string): never {
    throw new Error(`${this.fn}: cannot restore its state: ${part}: ${why}`);
  }

  /** the snapshot as a list whose length is one of `lengths` */
  list(part: string, value: unknown, lengths?: readonly number[]): unknown[] {
    if (!Array.isArray(value)) return this.fail(part, `expected a list, got ${describeValue(value)}`);
    if (lengths !== undefined && !lengths.includes(value.length)) {
      const wanted = lengths.length === 1 ? `${lengths[0]}` : `${lengths.slice(0, -1).join(', ')} or ${lengths[lengths.length - 1]}`;
      this.fail(part, `expected a list of ${wanted} items, got ${value.length}`);
    }
    return value;
  }

  /** a count: a safe integer >= 0 */
  count(part: string, value: unknown): number {
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    return this.fail(part, `expected a count (an integer >= 0), got ${describeValue(value)}`);
  }

  boolean(part: string, value: unknown): boolean {
    if (typeof value === 'boolean') return value;
    return this.fail(part, `expected a bool, got ${describeValue(value)}`);
  }

  string(part: string, value: unknown): string {
    if (typeof value === 'string') return value;
    return this.fail(part, `expected a string, got ${describeValue(value)}`);
  }

  /** an integer of any size, as a bigint (the JSON reader gives one within ±2^53 as a number) */
  bigint(part: string, value: unknown): bigint {
    if (typeof value === 'bigint') return value;
    if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 2 ** 53) return BigInt(value);
    return this.fail(part, `expected an integer, got ${describeValue(value)}`);
  }

  /** a double written by `writeDouble` */
  double(part: string, value: unknown): number {
    if (typeof value === 'number') return value;
    const special = typeof value === 'string' ? SPECIAL_DOUBLES.get(value) : undefined;
    if (special !== undefined) return special;
    return this.fail(part, `expected a number (or "-0", "NaN", "Infinity", "-Infinity"), got ${describeValue(value)}`);
  }

  /** a number or bigint written by `writeNumeric` */
  numeric(part: string, value: unknown): number | bigint {
    if (typeof value === 'number' || typeof value === 'bigint') return value;
    if (typeof value === 'string') {
      const special = SPECIAL_DOUBLES.get(value);
      if (special !== undefined) return special;
      if (/^-?\d+n$/.test(value)) return BigInt(value.slice(0, -1));
    }
    return this.fail(part, `expected a number, a bigint or its tag ("-0", "NaN", "Infinity", "-Infinity", "<digits>n"), got ${describeValue(value)}`);
  }

  /** base64 text as bytes, checked to be canonical base64 (Buffer.from skips what is not) */
  base64(part: string, value: unknown): Buffer {
    const text = this.string(part, value);
    const bytes = Buffer.from(text, 'base64');
    if (bytes.toString('base64') !== text) this.fail(part, 'is not base64');
    return bytes;
  }

  /**
   * Values written by `writeHeld`: `json` its list (not changed: the values
   * are fresh copies), `patches` its patches or undefined.
   */
  held(part: string, json: unknown, patches: unknown): unknown[] {
    const values = this.list(part, json).map(clone);
    if (patches === undefined) return values;
    for (const patch of this.list(`${part} patches`, patches)) this.patch(`${part} patch ${compactJson(patch)}`, values, patch);
    return values;
  }

  private patch(part: string, values: unknown[], patch: unknown): void {
    const [path, tag] = this.list(part, patch, [2]);
    const keys = this.list(part, path);
    if (keys.length === 0) this.fail(part, 'empty path');
    let container: unknown = values;
    let key: unknown;
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) container = (container as Record<string | number, unknown>)[key as string | number];
      key = keys[i];
      const isIndex = Array.isArray(container) && typeof key === 'number' && Number.isInteger(key) && key >= 0 && key < container.length;
      const isField =
        !Array.isArray(container) && typeof container === 'object' && container !== null && typeof key === 'string' && Object.hasOwn(container, key);
      if (!isIndex && !isField) this.fail(part, `no ${compactJson(key)} at step ${i + 1} of the path`);
    }
    const record = container as Record<string | number, unknown>;
    const at = key as string | number;
    record[at] = this.leaf(part, tag, record[at]);
  }

  /** what a patch's tag says the leaf was; bytes from their placeholder, the base64 text */
  private leaf(part: string, tag: unknown, placeholder: unknown): unknown {
    if (tag === 'buffer' || tag === 'bytes') {
      const bytes = this.base64(part, placeholder);
      return tag === 'buffer' ? bytes : new Uint8Array(bytes);
    }
    if (tag === 'undefined') return undefined;
    return this.numeric(part, tag);
  }
}

const SPECIAL_DOUBLES = new Map<string, number>([
  ['-0', -0],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
]);

/** A double as JSON gives it back exactly: itself, or -0, NaN and the infinities by name. */
export function writeDouble(x: number): number | string {
  if (Number.isFinite(x)) return Object.is(x, -0) ? '-0' : x;
  return String(x);
}

/** A number by `writeDouble`; a bigint as itself when JSON reads it back as one (beyond ±2^53), else tagged "<digits>n". */
export function writeNumeric(x: number | bigint): number | bigint | string {
  if (typeof x === 'number') return writeDouble(x);
  return x > NUMBER_LIMIT || x < -NUMBER_LIMIT ? x : `${x}n`;
}

/** A leaf JSON would change, by where it is in the held list (indexes and keys) and what it was. */
type Patch = [path: (string | number)[], tag: string];

/**
 * Values an accumulator holds as they came (first, last, collect), as a
 * fresh JSON copy and the patches that make it exactly them again. Plain
 * JSON values (strings, finite numbers, bigints beyond ±2^53, lists, maps)
 * need none, so the common case is the values as they are. A leaf JSON
 * would change gets a placeholder and a patch `[path, tag]`, tag being what
 * it was: "-0", "NaN", "Infinity", "-Infinity", "<digits>n" for a bigint
 * within ±2^53, "undefined", and for bytes "buffer" (a Buffer) or "bytes"
 * (another Uint8Array), whose placeholder is its base64 text: without its
 * patch the copy reads as the json codec would write the value. Any other
 * object (never an evaluated argument: CEL results arrive as plain JSON
 * values) is copied as JSON writes it: `toJSON` if it has one, else its own
 * enumerable fields.
 */
export function writeHeld(values: readonly unknown[]): { json: unknown[]; patches: Patch[] } {
  const patches: Patch[] = [];
  const path: (string | number)[] = [];
  const json = new Array<unknown>(values.length);
  for (let i = 0; i < values.length; i++) {
    path.push(i);
    json[i] = copy(values[i], path, patches);
    path.pop();
  }
  return { json, patches };
}

function copy(value: unknown, path: (string | number)[], patches: Patch[]): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value) && !Object.is(value, -0)) return value;
      patches.push([path.slice(), writeDouble(value) as string]);
      return null;
    case 'bigint':
      if (value > NUMBER_LIMIT || value < -NUMBER_LIMIT) return value;
      patches.push([path.slice(), `${value}n`]);
      return Number(value);
    case 'undefined':
      patches.push([path.slice(), 'undefined']);
      return null;
    case 'object':
      break;
    default:
      return null; // a function or symbol: not a value
  }
  if (value === null) return null;
  if (value instanceof Uint8Array) {
    patches.push([path.slice(), Buffer.isBuffer(value) ? 'buffer' : 'bytes']);
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      out[i] = copy(value[i], path, patches);
      path.pop();
    }
    return out;
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return copy(toJSON.call(value), path, patches);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    path.push(key);
    setOwn(out, key, copy((value as Record<string, unknown>)[key], path, patches));
    path.pop();
  }
  return out;
}

/** A fresh copy of a JSON value as the reader gives it, so patching it leaves the caller's snapshot as it was. */
function clone(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(clone);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, clone((value as Record<string, unknown>)[key]));
  return out;
}

/** A value in a message: short scalars as they are, others by type. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length} characters`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return `${typeName(value)} ${value}`;
  if (Array.isArray(value)) return `a list of ${value.length}`;
  return typeName(value);
}
