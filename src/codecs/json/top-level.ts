import { setOwn } from '../integers';
import { hasLongDigitRun } from '../json';
import { parsePrecise } from './precise-parse';
import { topLevelIndex, type TopLevelIndex } from './canonical';
import { LazyEvent } from '../../core/lazy-event';
import type { EddyEvent } from '../../core/event';

// the same codes as canonical.ts, kept local: compiled to CommonJS, an imported constant is a property load in these loops
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The number grammar of RFC 8259. */
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER) + 1n; // 2^53: the codec keeps ±2^53 as numbers

/**
 * The members named in `keys` of the JSON object `text`, decoded exactly as
 * the json codec decodes the whole document (integers beyond ±2^53 as
 * BigInt, a repeated key's last value), without decoding the rest: a key
 * absent from the object is absent from the result. undefined when the
 * document is not an object, or anything is not as expected: the caller
 * then decodes the whole document, which says what is wrong.
 *
 * `text` must be a document the codec accepts (a lazy event's frame, which
 * its codec checked): the members skipped are walked for their end, not
 * validated again. It works on the decoded text rather than the frame's
 * bytes: one native conversion, then every step (finding a string's end,
 * slicing a value out) stays in JavaScript, where a call per value into
 * Buffer's native methods cost more than the scan.
 */
export function extractTopLevel(text: string, keys: readonly string[]): Record<string, unknown> | undefined {
  const n = text.length;
  const plain = !text.includes('\\');
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
  const out: Record<string, unknown> = {};
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_OBJECT) return skipSpace(text, i + 1) === n ? out : undefined;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, i + 1, plain); // the closing quote
    if (keyEnd < 0) return undefined;
    const want = wanted(text, i + 1, keyEnd, keys, plain);
    if (want === -2) return undefined;
    i = skipSpace(text, keyEnd + 1);
    if (text.charCodeAt(i) !== COLON) return undefined;
    const start = skipSpace(text, i + 1);
    const end = valueEnd(text, start, plain);
    if (end < 0) return undefined;
    if (want >= 0) {
      const value = decodeValue(text, start, end, plain);
      if (value === undefined) return undefined;
      const name = keys[want];
      if (name === '__proto__') setOwn(out, name, value);
      else out[name] = value;
    }
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_OBJECT) return skipSpace(text, i + 1) === n ? out : undefined;
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}

/**
 * `extractTopLevel` for a frame (valid UTF-8, which the codec checked
 * before leaving it undecoded). When it is the frame the codec's canonical
 * check walked last, the members are found from that walk's offsets
 * (canonical.ts `topLevelIndex`) without scanning the frame again.
 */
export function extractFromFrame(frame: Buffer, keys: readonly string[]): Record<string, unknown> | undefined {
  const indexed = topLevelIndex(frame);
  // toString() without arguments is Buffer's shortest path to UTF-8 text
  const text = frame.toString();
  // a frame with a backslash may have escaped keys, which only a scan decodes
  return !indexed?.plain ? extractTopLevel(text, keys) : extractIndexed(text, indexed, keys);
}

/** The wanted members by the offsets of a canonical walk of a frame without a backslash: each key at most once. */
function extractIndexed(text: string, index: TopLevelIndex, keys: readonly string[]): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const { count, keyStart, keyEnd } = index;
  for (const key of keys) {
    for (let k = 0; k < count; k++) {
      const start = keyStart[k];
      if (keyEnd[k] - start !== key.length || (key.length > 0 && text.charCodeAt(start) !== key.charCodeAt(0)) || !text.startsWith(key, start)) continue;
      const value = decodeValue(text, keyEnd[k] + 2, k + 1 < count ? keyStart[k + 1] - 2 : text.length - 1, true);
      if (value === undefined) return undefined;
      if (key === '__proto__') setOwn(out, key, value);
      else out[key] = value;
      break;
    }
  }
  return out;
}

function skipSpace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** The index of the quote closing the string whose content starts at `i`, or -1. */
function stringEnd(text: string, i: number, plain: boolean): number {
  // indexOf, even for short strings: measured faster than a charCodeAt loop
  if (plain) return text.indexOf('"', i);
  const n = text.length;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i;
    if (c === BACKSLASH) i++; // the escaped character (\" among them) is never the end
  }
  return -1;
}

/**
 * Which of `keys` the key whose content is start..end is: its index, -1 for
 * none, -2 when it holds an escape that does not decode (the caller gives up).
 */
function wanted(text: string, start: number, end: number, keys: readonly string[], plain: boolean): number {
  const length = end - start;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k];
    // the length and first character rule out nearly every other key before a full comparison
    if (key.length === length && (length === 0 || key.charCodeAt(0) === text.charCodeAt(start)) && text.startsWith(key, start)) return k;
  }
  if (plain) return -1;
  const raw = text.slice(start - 1, end + 1);
  if (!raw.includes('\\')) return -1;
  // an escaped key (`"a\u0062"` is "ab"): decode it and compare
  try {
    return keys.indexOf(JSON.parse(raw) as string);
  } catch {
    return -2;
  }
}

/** The index after the value starting at `i` (not validated inside), or -1. */
function valueEnd(text: string, i: number, plain: boolean): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) {
    const end = stringEnd(text, i + 1, plain);
    return end < 0 ? -1 : end + 1;
  }
  const n = text.length;
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    let depth = 0;
    for (; i < n; i++) {
      const d = text.charCodeAt(i);
      if (d === QUOTE) {
        i = stringEnd(text, i + 1, plain);
        if (i < 0) return -1;
      } else if (d === OPEN_OBJECT || d === OPEN_ARRAY) {
        depth++;
      } else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // a number or literal: up to the next delimiter
  const start = i;
  for (; i < n; i++) {
    const d = text.charCodeAt(i);
    if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
  }
  return i > start ? i : -1;
}

/** The value at start..end as the codec decodes it; undefined when unsure. */
function decodeValue(text: string, start: number, end: number, plain: boolean): unknown {
  const c = text.charCodeAt(start);
  if (c === QUOTE) {
    const raw = text.slice(start + 1, end - 1);
    return plain || !raw.includes('\\') ? raw : parse(text.slice(start, end), false);
  }
  if (c === OPEN_ARRAY && plain) {
    const strings = stringArray(text, start, end);
    if (strings !== undefined) return strings;
  }
  const raw = text.slice(start, end);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) return parse(raw, hasLongDigitRun(raw));
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw === 'null') return null;
  if (!NUMBER.test(raw)) return undefined;
  // an integer literal of 16 digits or more may lie beyond ±2^53: exact, as the codec reads it
  const digits = c === 0x2d ? raw.length - 1 : raw.length;
  if (digits >= 16 && !/[.eE]/.test(raw)) {
    const big = BigInt(raw);
    return big >= -SAFE_MAX && big <= SAFE_MAX ? Number(big) : big;
  }
  return Number(raw);
}

/**
 * A compact array of strings without escapes (`["a","b"]`, tags), read
 * directly: JSON.parse's fixed cost is several times this for short lists.
 * undefined for any other array.
 */
function stringArray(text: string, start: number, end: number): string[] | undefined {
  const out: string[] = [];
  let i = start + 1;
  if (text.charCodeAt(i) === CLOSE_ARRAY) return i + 1 === end ? out : undefined;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const close = text.indexOf('"', i + 1);
    if (close < 0 || close >= end) return undefined;
    out.push(text.slice(i + 1, close));
    const c = text.charCodeAt(close + 1);
    if (c === CLOSE_ARRAY) return close + 2 === end ? out : undefined;
    if (c !== COMMA) return undefined;
    i = close + 2;
  }
}

function parse(raw: string, precise: boolean): unknown {
  try {
    return precise ? parsePrecise(raw) : JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/**
 * The fields `keys` of an event still undecoded from a json frame (runtime::cel and window::aggregate
 * read only these); undefined when the event is decoded, or the frame is not something the extractor vouches for.
 */
export function unreadFields(event: EddyEvent, keys: readonly string[]): Record<string, unknown> | undefined {
  if (!(event instanceof LazyEvent)) return undefined;
  const frame = event.unreadFrame('json');
  if (frame === undefined) return undefined;
  // the codec checked the frame (valid UTF-8 among the rest) when it left it undecoded
  return keys.length === 0 ? {} : extractFromFrame(frame, keys);
}
