import { isUtf8 } from 'node:buffer';
import { MAX_CANONICAL_DEPTH } from './codec';

const MAX_KEYS_CHECKED = 64;
const SAFE = 2 ** 53;

/**
 * Tells whether the msgpack codec would encode the value decoded from
 * `frame` back to exactly these bytes (see json/canonical.ts for why). It
 * walks the frame and accepts only what msgpackr, as the codec configures
 * it, writes: the smallest header for every string (by byte length), array
 * and map; integers that fit 32 bits in their smallest form; a float 64
 * only for a value that is not such an integer (and not NaN); int 64 and
 * uint 64 only beyond ±2^53 (smaller ones decode to numbers), uint 64 only
 * above 2^63 - 1; strings of valid UTF-8. Refused (a fresh encode instead):
 * float 32, binary, extensions, the never-used byte, map keys that are not
 * strings, repeated within one map, array indices (objects move those first)
 * or `__proto__`, maps of more than 64 keys, containers nested deeper than
 * MAX_CANONICAL_DEPTH (msgpackr reads and writes them recursively), and
 * trailing bytes.
 *
 * Any bytes may be given: every header and length is checked against the
 * frame's end before it is read, so `true` also means msgpackr decodes the
 * frame without error (and without the never-used byte 0xc1, which the
 * codec refuses).
 */
export function isCanonicalMsgpack(frame: Buffer): boolean {
  return frame.length > 0 && value(frame, 0, 0) === frame.length;
}

/** The offset after the value at `i` (inside `depth` containers), or -1 when it is not in the codec's own form. */
function value(frame: Buffer, i: number, depth: number): number {
  if (i >= frame.length) return -1;
  const c = frame[i];
  if (c < 0x80 || c >= 0xe0) return i + 1; // positive and negative fixint
  if (c < 0x90) return map(frame, i + 1, c & 0x0f, 0, depth);
  if (c < 0xa0) return array(frame, i + 1, c & 0x0f, 0, depth);
  if (c < 0xc0) return string(frame, i + 1, c & 0x1f, 0);
  switch (c) {
    case 0xc0: // nil
    case 0xc2: // false
    case 0xc3: // true
      return i + 1;
    case 0xcc: // uint 8
      return frame[i + 1] >= 0x80 ? i + 2 : -1;
    case 0xcd: // uint 16
      return frame.length >= i + 3 && frame.readUInt16BE(i + 1) >= 0x100 ? i + 3 : -1;
    case 0xce: // uint 32
      return frame.length >= i + 5 && frame.readUInt32BE(i + 1) >= 0x10000 ? i + 5 : -1;
    case 0xd0: // int 8
      return frame.length >= i + 2 && frame.readInt8(i + 1) < -0x20 ? i + 2 : -1;
    case 0xd1: // int 16
      return frame.length >= i + 3 && frame.readInt16BE(i + 1) < -0x80 ? i + 3 : -1;
    case 0xd2: // int 32
      return frame.length >= i + 5 && frame.readInt32BE(i + 1) < -0x8000 ? i + 5 : -1;
    case 0xd3: {
      // int 64: a BigInt only beyond ±2^53
      if (frame.length < i + 9) return -1;
      const v = frame.readBigInt64BE(i + 1);
      return v > SAFE_BIG || v < -SAFE_BIG ? i + 9 : -1;
    }
    case 0xcf: // uint 64: written only above int 64's range
      return frame.length >= i + 9 && frame.readBigUInt64BE(i + 1) > INT64_MAX ? i + 9 : -1;
    case 0xcb: {
      if (frame.length < i + 9) return -1;
      const v = frame.readDoubleBE(i + 1);
      // an integer that fits 32 bits (and -0) is written as an int; NaN has more than one bit pattern
      if (v !== v || v >>> 0 === v || v >> 0 === v) return -1;
      return i + 9;
    }
    case 0xd9: // str 8
      return frame.length >= i + 2 && frame[i + 1] >= 0x20 ? string(frame, i + 2, frame[i + 1], 0) : -1;
    case 0xda: // str 16
      return frame.length >= i + 3 ? string(frame, i + 3, frame.readUInt16BE(i + 1), 0x100) : -1;
    case 0xdb: // str 32
      return frame.length >= i + 5 ? string(frame, i + 5, frame.readUInt32BE(i + 1), 0x10000) : -1;
    case 0xdc: // array 16
      return frame.length >= i + 3 ? array(frame, i + 3, frame.readUInt16BE(i + 1), 0x10, depth) : -1;
    case 0xdd: // array 32
      return frame.length >= i + 5 ? array(frame, i + 5, frame.readUInt32BE(i + 1), 0x10000, depth) : -1;
    case 0xde: // map 16
      return frame.length >= i + 3 ? map(frame, i + 3, frame.readUInt16BE(i + 1), 0x10, depth) : -1;
    case 0xdf: // map 32
      return frame.length >= i + 5 ? map(frame, i + 5, frame.readUInt32BE(i + 1), 0x10000, depth) : -1;
    default: // float 32, binary, extensions, 0xc1
      return -1;
  }
}

const SAFE_BIG = BigInt(SAFE);
const INT64_MAX = 2n ** 63n - 1n;

/** A string of `length` bytes at `i`, whose header needed at least `min` for its length. */
function string(frame: Buffer, i: number, length: number, min: number): number {
  const end = i + length;
  if (length < min || end > frame.length) return -1;
  // msgpackr reads invalid UTF-8 leniently, and writes what it read: only valid text comes back the same
  if (length >= 32) return isUtf8(frame.subarray(i, end)) ? end : -1; // natively, for long strings
  for (let j = i; j < end; j++) {
    if (frame[j] >= 0x80) return isUtf8(frame.subarray(i, end)) ? end : -1;
  }
  return end;
}

function array(frame: Buffer, i: number, count: number, min: number, depth: number): number {
  if (count < min || (count > 0 && depth === MAX_CANONICAL_DEPTH)) return -1;
  for (let k = 0; k < count && i >= 0; k++) i = value(frame, i, depth + 1);
  return i;
}

// key offsets of the maps open during a walk, reused from call to call
const keyStarts: number[] = [];

function map(frame: Buffer, i: number, count: number, min: number, depth: number): number {
  if (count < min || count > MAX_KEYS_CHECKED || (count > 0 && depth === MAX_CANONICAL_DEPTH)) return -1;
  const base = keyStarts.length;
  // a key's length and first byte pick one of 32 bits: only keys sharing a bit are compared
  let seen = 0;
  for (let k = 0; k < count; k++) {
    const keyStart = i;
    const c = frame[i];
    let textStart: number;
    if (c >= 0xa0 && c < 0xc0) textStart = i + 1;
    else if (c === 0xd9) textStart = i + 2;
    else return ((keyStarts.length = base), -1); // a key that is not a string (or of 256 bytes or more: not worth it)
    i = value(frame, i, depth + 1);
    if (i < 0 || !plainKey(frame, textStart, i)) return ((keyStarts.length = base), -1);
    // (an empty key has no first byte: the byte after it is its value's, which must not decide)
    const bit = 1 << ((i - keyStart + (i > textStart ? frame[textStart] : 0)) & 31);
    if ((seen & bit) !== 0) {
      // the same key twice: the last value wins, in the first one's place (a key's header holds its length)
      for (let j = base; j < keyStarts.length; j++) {
        if (sameBytes(frame, keyStarts[j], keyStart, i - keyStart)) return ((keyStarts.length = base), -1);
      }
    }
    seen |= bit;
    keyStarts.push(keyStart);
    i = value(frame, i, depth + 1);
    if (i < 0) return ((keyStarts.length = base), -1);
  }
  keyStarts.length = base;
  return i;
}

function sameBytes(frame: Buffer, a: number, b: number, length: number): boolean {
  for (let j = 0; j < length; j++) if (frame[a + j] !== frame[b + j]) return false;
  return true;
}

/** Not an array index (all digits) and not `__proto__` (which the codec decodes through a Map). */
function plainKey(frame: Buffer, start: number, end: number): boolean {
  if (end - start === 9 && frame.toString('latin1', start, end) === '__proto__') return false;
  if (end === start || end - start > 10) return true;
  for (let j = start; j < end; j++) if (frame[j] < 0x30 || frame[j] > 0x39) return true;
  return false;
}
