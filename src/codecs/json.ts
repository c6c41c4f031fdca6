import { isUtf8 } from 'node:buffer';
import type { CodecType } from './codec';
import { parsePrecise } from './json/precise-parse';
import { compactJson } from './json/compact';
import { isCanonicalJson } from './json/canonical';

/**
 * A run of 16 digits is the only way a document can hold an integer literal
 * beyond 2^53 (9007199254740992 has 16 digits). A run after a `.` (a
 * fraction: `14.620000000000001`) or before a `.`, `e` or `E` (the integer
 * part of a number with a fraction or an exponent) is not one: such a
 * number is a double whichever parser reads it, so it does not count, and
 * computed floats no longer send their documents through the precise parser
 * (about twice JSON.parse's time). Runs inside strings still match; they
 * only cost that trip. The same as the regex
 * /(?<![0-9.])[0-9]{16,}(?![0-9.eE])/ (test/codecs/digit-run.test.ts).
 *
 * Every run of 16 consecutive positions holds exactly one position p with
 * p % 16 == 15, so only those are probed, and the run around a digit found
 * there is measured: about 4 times faster than the regex /[0-9]{16}/.
 */
export function hasLongDigitRun(text: string): boolean {
  const n = text.length;
  for (let i = 15; i < n; i += 16) {
    if (!isDigit(text.charCodeAt(i))) continue;
    let start = i;
    let end = i;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    while (end < n - 1 && isDigit(text.charCodeAt(end + 1))) end++;
    if (end - start + 1 >= 16 && isIntegerRun(start > 0 ? text.charCodeAt(start - 1) : -1, end < n - 1 ? text.charCodeAt(end + 1) : -1)) return true;
    i = end; // the next probe lies past this run
  }
  return false;
}

/**
 * `hasLongDigitRun` on the UTF-8 bytes of the text, before they are decoded:
 * the same answer, since bytes 0x30-0x39 are only ever the ASCII digits in
 * UTF-8 (every byte of a multi-byte character is 0x80 or above), and about
 * twice as fast as reading the characters of the decoded string.
 */
export function hasLongDigitRunBytes(bytes: Uint8Array): boolean {
  const n = bytes.length;
  for (let i = 15; i < n; i += 16) {
    if (!isDigit(bytes[i])) continue;
    let start = i;
    let end = i;
    while (start > 0 && isDigit(bytes[start - 1])) start--;
    while (end < n - 1 && isDigit(bytes[end + 1])) end++;
    if (end - start + 1 >= 16 && isIntegerRun(start > 0 ? bytes[start - 1] : -1, end < n - 1 ? bytes[end + 1] : -1)) return true;
    i = end;
  }
  return false;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** A digit run between `before` and `after` (-1: the text's edge) could be an integer literal: not a fraction, no fraction or exponent after it. */
function isIntegerRun(before: number, after: number): boolean {
  return before !== DOT && after !== DOT && after !== LOWER_E && after !== UPPER_E;
}

/**
 * JSON: one document per frame, compact on the way out.
 *
 * Value model: JSON.parse's, except that integer literals beyond ±2^53
 * decode to BigInt and BigInt encodes as an exact integer literal, so 64-bit
 * ids and nanosecond timestamps survive decode then encode. Binary values
 * (Buffer, Uint8Array) encode as base64 strings.
 *
 * Integers, exactly: a literal from -2^53 to 2^53 (both included) decodes to
 * a number; beyond, to a BigInt of any size (2^64 - 1, -2^63, 2^100 alike).
 * A literal with a fraction or exponent is always a number (a double, so
 * `9007199254740993.0` rounds). A BigInt encodes as its exact literal. A
 * double whose value is an integer beyond ±2^53 encodes in exponent form
 * (`1.152921504606847e+18`) and decodes to the same double.
 *
 * Key order is kept, within the one limit of JavaScript objects: keys that
 * are array indices ("0", "17") come first, in ascending order.
 */
export const json: CodecType = {
  name: 'json',
  summary: 'One JSON document per frame; compact on the way out; integers beyond ±2^53 as BigInt.',
  mimeTypes: ['application/json'],
  create: () => ({
    name: 'json',
    decode(data) {
      if (data.length === 0) throw new SyntaxError('json: empty input (Eof at character 0)');
      // toString would silently replace invalid UTF-8; a frame that is not text is an error
      if (!isUtf8(data)) throw new SyntaxError('json: input is not valid UTF-8');
      const long = hasLongDigitRunBytes(data);
      const text = data.toString('utf8');
      // the fast path: native parsing is several times faster than any parser written in JS
      return long ? parsePrecise(text) : (JSON.parse(text) as unknown);
    },
    encode(value) {
      return Buffer.from(compactJson(value), 'utf8');
    },
    roundTrips: isCanonicalJson,
  }),
};
