import { isUtf8 } from 'node:buffer';
import { MAX_CANONICAL_DEPTH } from '../codec';
import { CONTROL, NON_ASCII, scanBytes } from './byte-scan';
import { isUnsafeIntegralDouble } from './precise-stringify';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const MAX_KEYS_CHECKED = 64;

// per open container (by depth): the index into keyStart/keyEnd where its keys begin, or -1 for an array
const bases: number[] = [];
// key offsets of the objects open during a scan, reused from call to call
const keyStart: number[] = [];
const keyEnd: number[] = [];
// per open object: which of 32 key hash bits its keys have taken
const seenBits: number[] = [];

/**
 * Tells whether the json codec decodes `frame` without error and encodes the
 * value back to exactly these bytes, so an onramp may skip decoding (the
 * value is decoded when first read) and an offramp may write out the frame
 * of an event nobody read or changed. Any bytes may be given: it validates
 * RFC 8259 (exactly one value, nothing after it, strings with no raw
 * control character and valid UTF-8), so `true` is never said of a frame
 * the codec would refuse. One pass walks the grammar; the bytes inside
 * strings are checked natively (byte-scan.ts for control characters, and
 * isUtf8 when a byte is not ASCII): a JavaScript loop over them would cost
 * as much as the JSON.parse this check replaces.
 *
 * It is conservative: `false` only costs a decode and a fresh encode. The form the codec
 * writes (compactJson) is: no whitespace between tokens; strings escaped as
 * JSON.stringify does (`\"`, `\\`, `\b\f\n\r\t`, `\u00xx` in lower case for
 * the other control characters, everything else as is); numbers as JS
 * prints them; object keys in their own order, each once. So a frame is
 * refused when it has whitespace between tokens, any other escape (`\/`,
 * `\u00e9`), `-0`, a fraction or exponent that does not read back as the same
 * text, a key that appears twice in one object (the last one wins), a key
 * that is an array index (JavaScript moves those to the front), an object
 * with more than 64 keys (not worth the duplicate check), or containers
 * nested deeper than MAX_CANONICAL_DEPTH. Integer literals are always exact in the
 * codec's value model (beyond ±2^53 they are BigInt, read by the precise
 * parser the codec takes for any run of 16 digits), so only their grammar
 * matters.
 */
export function isCanonicalJson(frame: Uint8Array): boolean {
  const n = frame.length;
  let depth = 0;
  let keys = 0;
  let i = 0;
  // the offsets recorded below are about to be overwritten
  lastIndexed = undefined;
  // the number of keys of a top-level object, once it closes
  let topKeys = -1;
  // without a backslash in the frame a string ends at the next quote: found natively for long strings
  const stringEnd = frame.includes(BACKSLASH) ? escapedStringEnd : plainStringEnd;
  for (;;) {
    // a value starts at i
    const c = frame[i];
    if (c === QUOTE) {
      i = stringEnd(frame, i + 1);
      if (i < 0) return false;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const closer = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      if (frame[++i] === closer) {
        i++; // {} or []: a whole value
      } else {
        if (depth === MAX_CANONICAL_DEPTH) return false;
        if (c === OPEN_ARRAY) {
          bases[depth++] = -1;
          continue; // its first element
        }
        seenBits[depth] = 0;
        bases[depth++] = keys;
        i = memberValueStart(frame, i, keys, depth, stringEnd);
        if (i < 0) return false;
        keys++;
        continue;
      }
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      i = numberEnd(frame, i);
      if (i < 0) return false;
    } else if (c === 0x74 /* t */) {
      if (frame[i + 1] !== 0x72 || frame[i + 2] !== 0x75 || frame[i + 3] !== 0x65) return false;
      i += 4;
    } else if (c === 0x66 /* f */) {
      if (frame[i + 1] !== 0x61 || frame[i + 2] !== 0x6c || frame[i + 3] !== 0x73 || frame[i + 4] !== 0x65) return false;
      i += 5;
    } else if (c === 0x6e /* n */) {
      if (frame[i + 1] !== 0x75 || frame[i + 2] !== 0x6c || frame[i + 3] !== 0x6c) return false;
      i += 4;
    } else {
      return false; // whitespace, the end of the frame, or a byte no value starts with
    }
    // after a value: close what it ends, until a comma starts the next one
    for (;;) {
      if (depth === 0) {
        if (i !== n || !bytesAreText(frame)) return false;
        if (topKeys > 0 && lastAscii) {
          lastIndexed = frame;
          index.count = topKeys;
          index.plain = stringEnd === plainStringEnd;
        }
        return true;
      }
      const base = bases[depth - 1];
      const d = frame[i++];
      if (d === COMMA) {
        if (base < 0) break; // the next element
        i = memberValueStart(frame, i, keys, depth, stringEnd);
        if (i < 0) return false;
        keys++;
        break;
      }
      if (d !== (base < 0 ? CLOSE_ARRAY : CLOSE_OBJECT)) return false;
      if (base >= 0) {
        if (depth === 1) topKeys = keys;
        keys = base;
      }
      depth--;
    }
  }
}

/**
 * Checks the key at `i` of the object open at `depth` (whose `keys - base`
 * keys so far are recorded) and its colon; the index of the member's value,
 * or -1 when it is not a key in canonical form, not one the codec keeps in
 * place, or a repeat.
 */
function memberValueStart(frame: Uint8Array, i: number, keys: number, depth: number, stringEnd: StringEnd): number {
  if (frame[i] !== QUOTE) return -1;
  const end = stringEnd(frame, i + 1);
  if (end < 0 || frame[end] !== COLON) return -1;
  const base = bases[depth - 1];
  if (keys - base >= MAX_KEYS_CHECKED || isIndexKey(frame, i + 1, end - 1)) return -1;
  // a key's length, first and last byte pick one of 32 bits: only keys sharing a bit are compared
  // (the 13 keys of a sample event all get bits of their own)
  const bit = 1 << (((end - i) * 7 + frame[i + 1] * 3 + frame[end - 2]) & 31);
  const seen = seenBits[depth - 1];
  if ((seen & bit) !== 0 && isRepeated(frame, i + 1, end - 1, base, keys)) return -1;
  seenBits[depth - 1] = seen | bit;
  keyStart[keys] = i + 1;
  keyEnd[keys] = end - 1;
  return end + 1;
}

/** No control character anywhere (strings included), and valid UTF-8 when not all ASCII. */
function bytesAreText(frame: Uint8Array): boolean {
  const found = scanBytes(frame);
  lastAscii = (found & NON_ASCII) === 0;
  return (found & CONTROL) === 0 && (lastAscii || isUtf8(frame));
}

/**
 * Where the top-level members of a canonical JSON object are, as
 * isCanonicalJson found them: key `k`'s text is `keyStart[k]..keyEnd[k]`
 * (keyEnd is its closing quote), its value starts after the colon and ends
 * before the comma and quote of key `k + 1`, or before the closing brace.
 * Keys are unique (a repeat is not canonical). Offsets are the same in the
 * bytes and in the decoded text: only an all-ASCII frame is indexed.
 */
export interface TopLevelIndex {
  count: number;
  readonly keyStart: readonly number[];
  readonly keyEnd: readonly number[];
  /** no backslash anywhere in the frame */
  plain: boolean;
}

const index: TopLevelIndex = { count: 0, keyStart, keyEnd, plain: false };
/** the frame `index` describes: the last one isCanonicalJson accepted, when it is an all-ASCII object with keys */
let lastIndexed: Uint8Array | undefined;
let lastAscii = false;

/**
 * The top-level index of `frame` when it is the frame isCanonicalJson
 * accepted last (an onramp checks a frame and hands its event down the
 * pipeline before it checks the next one, so a reader right behind it
 * finds the walk already made); undefined otherwise. Valid until the next
 * isCanonicalJson call: read it at once.
 */
export function topLevelIndex(frame: Uint8Array): TopLevelIndex | undefined {
  return frame === lastIndexed ? index : undefined;
}

/** The index after the closing quote of the string whose text starts at `i`, or -1 (the bytes between are for bytesAreText). */
type StringEnd = (frame: Uint8Array, i: number) => number;

/** For a frame without a backslash: the next quote closes the string. */
function plainStringEnd(frame: Uint8Array, i: number): number {
  // short strings (keys) are quicker in the loop than through a native call
  const stop = Math.min(i + 24, frame.length);
  for (; i < stop; i++) if (frame[i] === QUOTE) return i + 1;
  const end = frame.indexOf(QUOTE, i);
  return end < 0 ? -1 : end + 1;
}

/** Also -1 when the string holds an escape JSON.stringify would not write. */
function escapedStringEnd(frame: Uint8Array, i: number): number {
  const n = frame.length;
  while (i < n) {
    const c = frame[i];
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) {
      i++;
      continue;
    }
    const e = frame[i + 1];
    if (e === QUOTE || e === BACKSLASH || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
      i += 2; // \" \\ \b \f \n \r \t
      continue;
    }
    // \u00xx, lower-case hex, for a control character without a short form
    if (e !== 0x75 || frame[i + 2] !== ZERO || frame[i + 3] !== ZERO) return -1;
    const high = frame[i + 4];
    const low = frame[i + 5];
    if (high !== ZERO && high !== 0x31) return -1;
    const lowValue = low >= ZERO && low <= NINE ? low - ZERO : low >= 0x61 && low <= 0x66 ? low - 0x61 + 10 : -1;
    if (lowValue < 0) return -1;
    const code = (high - ZERO) * 16 + lowValue;
    if (code === 8 || code === 9 || code === 10 || code === 12 || code === 13) return -1;
    i += 6;
  }
  return -1; // not closed
}

/**
 * The index after a number (RFC 8259: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`),
 * or -1 when it is not one or the codec would write it differently.
 */
function numberEnd(frame: Uint8Array, start: number): number {
  let i = start;
  if (frame[i] === MINUS) i++;
  if (frame[i] === ZERO) i++;
  else if (isDigit(frame[i])) i = digitsEnd(frame, i + 1);
  else return -1;
  let plainInteger = true;
  if (frame[i] === 0x2e /* . */) {
    i = digitsEnd(frame, i + 1);
    plainInteger = false;
  }
  if (frame[i] === 0x65 || frame[i] === 0x45 /* e E */) {
    i++;
    if (frame[i] === 0x2b || frame[i] === MINUS) i++;
    i = digitsEnd(frame, i);
    plainInteger = false;
  }
  if (plainInteger) {
    // -0 reads as the number -0, which is written as 0
    return i - start === 2 && frame[start] === MINUS && frame[start + 1] === ZERO ? -1 : i;
  }
  // a fraction or exponent is a double: exact only when it is written back the same way
  // (which also refuses a point or exponent without digits after it: `1.`, `1e+` never are)
  let text = '';
  for (let j = start; j < i; j++) text += String.fromCharCode(frame[j]);
  const value = Number(text);
  const written = isUnsafeIntegralDouble(value) ? value.toExponential() : Number.isFinite(value) ? String(value) : 'null';
  return written === text ? i : -1;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function digitsEnd(frame: Uint8Array, i: number): number {
  while (isDigit(frame[i])) i++;
  return i;
}

/** A key of digits only: an array index (or close to one), which objects enumerate first. */
function isIndexKey(frame: Uint8Array, start: number, end: number): boolean {
  if (end === start || end - start > 10) return false;
  for (let i = start; i < end; i++) if (frame[i] < ZERO || frame[i] > NINE) return false;
  return true;
}

/** Whether the key at start..end equals one the same object had before (keys are in canonical form, so bytes decide). */
function isRepeated(frame: Uint8Array, start: number, end: number, base: number, keys: number): boolean {
  const length = end - start;
  for (let k = base; k < keys; k++) {
    const s = keyStart[k];
    if (keyEnd[k] - s !== length) continue;
    let same = true;
    for (let j = 0; j < length; j++) {
      if (frame[s + j] !== frame[start + j]) {
        same = false;
        break;
      }
    }
    if (same) return true;
  }
  return false;
}
