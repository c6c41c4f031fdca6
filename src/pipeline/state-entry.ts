/**
 * State entries that hold event values (a reduction's first event, its
 * merged fields) in a form that survives the store's JSON exactly.
 *
 * The store writes an entry with `compactJson` and reads it back with
 * `parsePrecise` (core/state.ts). That keeps strings, doubles and the
 * integers beyond ±2^53 (BigInt), but not everything an event can hold:
 * binary data (a kafka key or header is a Buffer) comes back as its base64
 * string, a BigInt within ±2^53 as a number, and NaN, ±Infinity and -0 as
 * null or 0. So `packEntry` writes such a value in its JSON form and notes
 * where it is, in the entry's `fix` list, and `unpackEntry` puts it back:
 *
 *     {"head": {"meta": {"kafka": {"key": "AAE="}}}, ..., "fix": [["b", "head", "meta", "kafka", "key"]]}
 *
 * A fix is `[kind, ...path]`, the path of object keys and array indexes from
 * the entry's top: `b` binary (base64 -> Buffer), `i` a BigInt (an integer
 * -> BigInt), `f` a special number (`"NaN"`, `"Infinity"`, `"-Infinity"`,
 * `"-0"`). The walk costs a copy of the entry, which the contract asks for
 * anyway (a snapshot shares nothing with the live state); entries without
 * such values have no `fix`.
 *
 * What stays inexact, as in eddy's JSON codec: a Uint8Array that is not a
 * Buffer comes back as a Buffer (the same bytes); a value with `toJSON` (a
 * Date) as what that returns; undefined, functions and symbols are left out
 * of objects and become null in arrays. Codecs produce none of these.
 */
import { jsonText } from '../core/json-text';
import { setOwn } from '../codecs/integers';

/** One noted value: its kind, then its path from the entry's top. */
type Fix = [kind: 'b' | 'i' | 'f', ...path: (string | number)[]];

const LIMIT = 2n ** 53n;

/**
 * The JSON-compatible form of an entry made of the node's own fields (their
 * names are the node's; `fix` is taken). A fresh copy: nothing in it is
 * shared with `fields`.
 */
export function packEntry(fields: Record<string, unknown>): Record<string, unknown> {
  const fixes: Fix[] = [];
  const path: (string | number)[] = [];
  const entry = copyOut(fields, path, fixes) as Record<string, unknown>;
  if (fixes.length > 0) entry.fix = fixes;
  return entry;
}

/**
 * The fields `packEntry` was given, from the entry as the store read it
 * back (or as packEntry returned it). A fresh copy: the node may keep and
 * change what it returns. Throws an Error saying what is wrong.
 */
export function unpackEntry(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`not an object: ${showValue(value)}`);
  const entry = copyIn(value) as Record<string, unknown>;
  const fixes = entry.fix;
  delete entry.fix;
  if (fixes === undefined) return entry;
  if (!Array.isArray(fixes)) throw new Error(`fix: not a list: ${showValue(fixes)}`);
  fixes.forEach((fix: unknown, n) => applyFix(entry, fix, `fix[${n}]`));
  return entry;
}

function copyOut(value: unknown, path: (string | number)[], fixes: Fix[]): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value) && !Object.is(value, -0)) return value;
      fixes.push(['f', ...path]);
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      // one beyond ±2^53 reads back as a BigInt by itself; within, as a number
      if (value >= -LIMIT && value <= LIMIT) fixes.push(['i', ...path]);
      return value;
    case 'object': {
      if (value === null) return null;
      if (value instanceof Uint8Array) {
        fixes.push(['b', ...path]);
        return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
      }
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return copyOut((value as { toJSON(): unknown }).toJSON(), path, fixes);
      if (Array.isArray(value)) {
        const out: unknown[] = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) {
          path.push(i);
          out[i] = copyOut(value[i], path, fixes) ?? null;
          path.pop();
        }
        return out;
      }
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        path.push(key);
        const item = copyOut((value as Record<string, unknown>)[key], path, fixes);
        path.pop();
        if (item !== undefined) setOwn(out, key, item);
      }
      return out;
    }
    default:
      return undefined; // undefined, a function, a symbol: left out, as JSON does
  }
}

/** A deep copy of JSON-compatible data (bigints included). */
function copyIn(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyIn);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, copyIn((value as Record<string, unknown>)[key]));
  return out;
}

function applyFix(entry: Record<string, unknown>, fix: unknown, where: string): void {
  if (!Array.isArray(fix) || fix.length < 2) throw new Error(`${where}: not [kind, ...path]: ${showValue(fix)}`);
  const [kind, ...path] = fix as unknown[];
  let container: unknown = entry;
  for (let i = 0; i < path.length - 1; i++) container = step(container, path[i], where);
  const last = path[path.length - 1];
  const value = step(container, last, where);
  if (Array.isArray(container)) container[last as number] = fixed(kind, value, where);
  else setOwn(container as Record<string, unknown>, last as string, fixed(kind, value, where));
}

/** The item at `key` of an object (a string key) or an array (an index); throws when there is none. */
function step(container: unknown, key: unknown, where: string): unknown {
  const ok =
    container !== null &&
    typeof container === 'object' &&
    (Array.isArray(container)
      ? typeof key === 'number' && Number.isInteger(key) && key >= 0 && key < container.length
      : typeof key === 'string' && Object.hasOwn(container, key));
  if (!ok) throw new Error(`${where}: the path has no ${JSON.stringify(key)}`);
  return (container as Record<string | number, unknown>)[key as string | number];
}

function fixed(kind: unknown, value: unknown, where: string): unknown {
  switch (kind) {
    case 'b':
      if (typeof value === 'string') {
        const bytes = Buffer.from(value, 'base64');
        if (bytes.toString('base64') === value) return bytes;
      }
      throw new Error(`${where}: binary data must be a base64 string, got ${showValue(value)}`);
    case 'i':
      if (typeof value === 'bigint') return value;
      if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 2 ** 53) return BigInt(value);
      throw new Error(`${where}: a big integer must be an integer, got ${showValue(value)}`);
    case 'f':
      if (value === 'NaN' || value === 'Infinity' || value === '-Infinity' || value === '-0') return Number(value);
      throw new Error(`${where}: a special number must be "NaN", "Infinity", "-Infinity" or "-0", got ${showValue(value)}`);
    default:
      throw new Error(`${where}: unknown kind ${showValue(kind)}`);
  }
}

/** A value in an error message: its JSON text, shortened. */
export function showValue(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'bigint' ? `${value}n` : (jsonText(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
