/**
 * What the aggregate functions accept, and the errors they give when a value
 * or a constant is not what they take. Every message starts with the
 * function's name, so the operator can send it to `err` as it is.
 */
import { isCelUint } from '@bufbuild/cel';

/** A number as the functions see it: a JS number (finite) or a bigint (an integer of any size). */
export type Numeric = number | bigint;

/** A short type name for error messages, in CEL's words where there is one. */
export function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'int' : 'double'; // as the CEL conversion sees it
  if (typeof value === 'bigint') return 'int';
  if (Array.isArray(value)) return 'list';
  if (value instanceof Uint8Array) return 'bytes';
  if (typeof value === 'object') return 'map';
  return typeof value;
}

/**
 * One per-event value of a numeric function. Numbers and bigints pass as they
 * are (a CEL uint as its bigint); NaN and the infinities are refused, since one
 * of them would poison the whole window's result.
 */
export function numericArg(fn: string, value: unknown): Numeric {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw new Error(`${fn}: expected a finite number, got ${value}`);
  }
  if (typeof value === 'bigint') return value;
  if (isCelUint(value)) return value.value;
  throw new Error(`${fn}: expected a number, got ${typeName(value)}`);
}

/** The same value as a double (a bigint beyond 2^53 rounds to the nearest double). */
export function numericDouble(fn: string, value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const n = numericArg(fn, value);
  return typeof n === 'number' ? n : Number(n);
}

/** A bigint as a number when that is exact, else the bigint (what the json codec writes as a number). */
export function exactInteger(n: bigint): Numeric {
  return n >= MIN_SAFE && n <= MAX_SAFE ? Number(n) : n;
}
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Checks how many constants a call got. `names` are the function's constant
 * arguments, the last `optional` of them may be left out; `eventArgs` counts
 * the per-event arguments before them, so the message numbers arguments as
 * the user wrote them.
 */
export function checkConstantCount(fn: string, eventArgs: number, names: readonly string[], optional: number, constants: readonly unknown[]): void {
  const least = names.length - optional;
  if (constants.length >= least && constants.length <= names.length) return;
  const wanted = least === names.length ? `${least}` : `${least} to ${names.length}`;
  const list = names.length === 0 ? 'none' : names.join(', ');
  throw new Error(
    `${fn}: takes ${wanted} constant argument${names.length === 1 ? '' : 's'} after its ${eventArgs} per-event one${eventArgs === 1 ? '' : 's'} (${list}), got ${constants.length}`,
  );
}

/** "argument 2 (q)": how a constant is named in messages. */
export function constantLabel(eventArgs: number, names: readonly string[], index: number): string {
  return `argument ${eventArgs + index + 1} (${names[index]})`;
}

/** A constant that must be a number (number or bigint) within [min, max]. */
export function numberConstant(fn: string, label: string, value: unknown, min: number, max: number): number {
  const n = typeof value === 'bigint' ? Number(value) : isCelUint(value) ? Number(value.value) : value;
  if (typeof n !== 'number') throw new Error(`${fn}: ${label} must be a number between ${min} and ${max}, got ${typeName(value)}`);
  if (!(n >= min && n <= max)) throw new Error(`${fn}: ${label} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A constant that must be an integer within [min, max]. */
export function integerConstant(fn: string, label: string, value: unknown, min: number, max: number): number {
  const n = typeof value === 'bigint' ? Number(value) : isCelUint(value) ? Number(value.value) : value;
  if (typeof n !== 'number') throw new Error(`${fn}: ${label} must be an integer from ${min} to ${max}, got ${typeName(value)}`);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${fn}: ${label} must be an integer from ${min} to ${max}, got ${n}`);
  return n;
}

/** `other` as an accumulator of `kind`, for merge; throws when it is of another function. */
export function mergeable<T extends object>(fn: string, kind: abstract new (...args: never[]) => T, other: unknown): T {
  if (other instanceof kind) return other;
  throw new Error(`${fn}: can only merge another ${fn} accumulator`);
}
