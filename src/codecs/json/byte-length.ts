import { isUnsafeIntegralDouble } from './precise-stringify';

/**
 * The length in UTF-8 bytes of `compactJson(value)`, without writing it: for
 * a count of what an event would be as JSON (an offramp's `bytes` metric)
 * where nobody needs the text itself. Walks the value once, as the writer
 * would: `toJSON` honoured, `undefined`, functions and symbols left out of
 * objects and `null` in arrays, non-finite numbers `null`, BigInt exact, a
 * double integral beyond ±2^53 in exponent form, a Uint8Array as base64.
 *
 * One difference, where the writer would give up or diverge: a BigInt,
 * binary data or an unsafe integer returned by a `toJSON` (JSON.stringify
 * refuses a BigInt there) is counted as the precise writer writes it.
 * A cycle overflows the stack (RangeError), as compactJson does.
 */
export function jsonByteLength(value: unknown): number {
  return measure(value) ?? 4; // top-level undefined is written as `null`
}

/** The length of a value; undefined for one an object leaves out. */
function measure(value: unknown): number | undefined {
  switch (typeof value) {
    case 'string':
      return stringLength(value);
    case 'number':
      return numberLength(value);
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      return value.toString().length;
    case 'object':
      if (value === null) return 4;
      if (value instanceof Uint8Array) return 2 + 4 * Math.ceil(value.byteLength / 3); // base64, padded
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return measure((value as { toJSON(key: string): unknown }).toJSON(''));
      if (Array.isArray(value)) return arrayLength(value);
      return objectLength(value as Record<string, unknown>);
    default:
      return undefined; // undefined, function, symbol
  }
}

function arrayLength(array: unknown[]): number {
  let n = 2 + Math.max(0, array.length - 1); // brackets and commas
  for (let i = 0; i < array.length; i++) n += measure(array[i]) ?? 4;
  return n;
}

function objectLength(object: Record<string, unknown>): number {
  let n = 2; // braces
  let members = 0;
  for (const key of Object.keys(object)) {
    const length = measure(object[key]);
    if (length === undefined) continue;
    n += stringLength(key) + 1 + length; // "key":value
    members++;
  }
  return members > 1 ? n + members - 1 : n;
}

/** Digits of an int32 without making its text (the common case: counters, ids, small numbers). */
function numberLength(value: number): number {
  if ((value | 0) === value) {
    let n = value < 0 ? 2 : 1;
    let rest = value < 0 ? -value : value;
    while (rest >= 10) {
      rest = Math.floor(rest / 10);
      n++;
    }
    return n;
  }
  if (!Number.isFinite(value)) return 4; // null
  return (isUnsafeIntegralDouble(value) ? value.toExponential() : String(value)).length;
}

/** Characters JSON.stringify escapes: `"`, `\`, controls, and surrogates (a lone one is written as \uXXXX). */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

function stringLength(text: string): number {
  // short strings (keys, names, most values): a loop beats the regex and the native call
  if (text.length <= 32) {
    let n = 2;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x7f) return carefulLength(text);
      n++;
    }
    return n;
  }
  // longer: checked natively; nothing escaped, so the UTF-8 length of the text plus its quotes
  return NEEDS_CARE.test(text) ? carefulLength(text) : Buffer.byteLength(text, 'utf8') + 2;
}

/** Character by character: escapes, multi-byte characters, surrogate pairs and lone surrogates. */
function carefulLength(text: string): number {
  let n = 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0x20) n += c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff) {
      n += 4; // a pair: one code point of four bytes
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff)
      n += 6; // a lone surrogate: \udXXX
    else n += 3;
  }
  return n;
}
