import { isUnsafeIntegralDouble } from './precise-stringify';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MAX_KEYS_CHECKED = 64;

// key offsets of the objects open during a scan, reused from call to call
const keyStart: number[] = [];
const keyEnd: number[] = [];
// per open container: which of 32 key hash bits its keys have taken
const seenBits: number[] = [];

/**
 * Tells whether the json codec would encode the value decoded from `frame`
 * back to exactly these bytes, so an offramp may write out the frame of an
 * event nobody read or changed instead of encoding it again. `frame` must
 * be one the json codec decoded without error (valid UTF-8 and JSON).
 *
 * It is conservative: `false` only costs a fresh encode. The form the codec
 * writes (compactJson) is: no whitespace between tokens; strings escaped as
 * JSON.stringify does (`\"`, `\\`, `\b\f\n\r\t`, `\u00xx` in lower case for
 * the other control characters, everything else as is); numbers as JS
 * prints them; object keys in their own order, each once. So a frame is
 * refused when it has whitespace between tokens, any other escape (`\/`,
 * `\u00e9`), `-0`, a fraction or exponent that does not read back as the same
 * text, a key that appears twice in one object (the last one wins), a key
 * that is an array index (JavaScript moves those to the front), or an object
 * with more than 64 keys (not worth the duplicate check). Integer literals
 * are always exact in the codec's value model (beyond ±2^53 they are BigInt).
 */
export function isCanonicalJson(frame: Uint8Array): boolean {
  const n = frame.length;
  // per open container: the index into keyStart/keyEnd where its keys begin, or -1 for an array
  const bases: number[] = [];
  let keys = 0;
  let expectKey = false;
  // without a backslash in the frame a string ends at the next quote: found natively for long strings
  const escapes = frame.indexOf(BACKSLASH) >= 0;
  let i = 0;
  while (i < n) {
    const c = frame[i];
    if (c === QUOTE) {
      const end = escapes ? stringEnd(frame, i + 1) : plainStringEnd(frame, i + 1);
      if (end < 0) return false;
      if (expectKey) {
        const base = bases[bases.length - 1];
        if (keys - base >= MAX_KEYS_CHECKED || isIndexKey(frame, i + 1, end - 1)) return false;
        // a key's length and first byte pick one of 32 bits: only keys sharing a bit are compared
        const bit = 1 << ((end - i + frame[i + 1]) & 31);
        const seen = seenBits[bases.length - 1];
        if ((seen & bit) !== 0 && isRepeated(frame, i + 1, end - 1, base, keys)) return false;
        seenBits[bases.length - 1] = seen | bit;
        keyStart[keys] = i + 1;
        keyEnd[keys] = end - 1;
        keys++;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      seenBits[bases.length] = 0;
      bases.push(keys);
      expectKey = true;
      i++;
    } else if (c === 0x5b /* [ */) {
      bases.push(-1);
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      const base = bases.pop()!;
      if (base >= 0) keys = base;
      i++;
    } else if (c === 0x2c /* , */) {
      expectKey = bases[bases.length - 1] >= 0;
      i++;
    } else if (c === 0x3a /* : */) {
      i++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(frame, i);
      if (end < 0) return false;
      i = end;
    } else if (c === 0x74 /* true */ || c === 0x6e /* null */) {
      i += 4;
    } else if (c === 0x66 /* false */) {
      i += 5;
    } else {
      return false; // whitespace between tokens
    }
  }
  return true;
}

/** The index after the closing quote of a string without escapes. */
function plainStringEnd(frame: Uint8Array, i: number): number {
  // short strings (keys) are quicker in the loop than through a native call
  const stop = Math.min(i + 24, frame.length);
  for (; i < stop; i++) if (frame[i] === QUOTE) return i + 1;
  return frame.indexOf(QUOTE, i) + 1;
}

/** The index after a string's closing quote, or -1 when it holds an escape JSON.stringify would not write. */
function stringEnd(frame: Uint8Array, i: number): number {
  for (;;) {
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
    if (e !== 0x75 || frame[i + 2] !== 0x30 || frame[i + 3] !== 0x30) return -1;
    const high = frame[i + 4];
    const low = frame[i + 5];
    if (high !== 0x30 && high !== 0x31) return -1;
    const lowValue = low >= 0x30 && low <= 0x39 ? low - 0x30 : low >= 0x61 && low <= 0x66 ? low - 0x61 + 10 : -1;
    if (lowValue < 0) return -1;
    const code = (high - 0x30) * 16 + lowValue;
    if (code === 8 || code === 9 || code === 10 || code === 12 || code === 13) return -1;
    i += 6;
  }
}

/** The index after a number, or -1 when the codec would write it differently. */
function numberEnd(frame: Uint8Array, start: number): number {
  let i = start;
  let plainInteger = true;
  for (; i < frame.length; i++) {
    const c = frame[i];
    if (c >= 0x30 && c <= 0x39) continue;
    if (c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || (c === 0x2d && i > start)) plainInteger = false;
    else if (c !== 0x2d) break;
  }
  if (plainInteger) {
    // -0 reads as the number -0, which is written as 0
    return i - start === 2 && frame[start] === 0x2d && frame[start + 1] === 0x30 ? -1 : i;
  }
  // a fraction or exponent is a double: exact only when it is written back the same way
  let text = '';
  for (let j = start; j < i; j++) text += String.fromCharCode(frame[j]);
  const value = Number(text);
  const written = isUnsafeIntegralDouble(value) ? value.toExponential() : Number.isFinite(value) ? String(value) : 'null';
  return written === text ? i : -1;
}

/** A key of digits only: an array index (or close to one), which objects enumerate first. */
function isIndexKey(frame: Uint8Array, start: number, end: number): boolean {
  if (end === start || end - start > 10) return false;
  for (let i = start; i < end; i++) if (frame[i] < 0x30 || frame[i] > 0x39) return false;
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
