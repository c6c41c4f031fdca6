import { isUtf8 } from 'node:buffer';
import type { CodecType } from './codec';
import { parsePrecise } from './json/precise-parse';
import { compactJson } from './json/compact';

/**
 * A run of 16 digits is the only way a document can hold an integer literal
 * beyond 2^53 (9007199254740992 has 16 digits). Runs inside strings or
 * fractions also match; they only cost a trip through the precise parser.
 */
const MAYBE_UNSAFE_INTEGER = /[0-9]{16}/;

/**
 * JSON: one document per frame, compact on the way out.
 *
 * Value model: JSON.parse's, except that integer literals beyond ±2^53
 * decode to BigInt and BigInt encodes as an exact integer literal, so 64-bit
 * ids and nanosecond timestamps survive decode then encode. Binary values
 * (Buffer, Uint8Array) encode as base64 strings.
 *
 * Key order is kept, within the one limit of JavaScript objects: keys that
 * are array indices ("0", "17") come first, in ascending order.
 */
export const json: CodecType = {
  name: 'json',
  mimeTypes: ['application/json'],
  create: () => ({
    name: 'json',
    decode(data) {
      if (data.length === 0) throw new SyntaxError('json: empty input (Eof at character 0)');
      // toString would silently replace invalid UTF-8; a frame that is not text is an error
      if (!isUtf8(data)) throw new SyntaxError('json: input is not valid UTF-8');
      const text = data.toString('utf8');
      // the fast path: native parsing is several times faster than any parser written in JS
      return MAYBE_UNSAFE_INTEGER.test(text) ? parsePrecise(text) : JSON.parse(text);
    },
    encode(value) {
      return Buffer.from(compactJson(value), 'utf8');
    },
  }),
};
