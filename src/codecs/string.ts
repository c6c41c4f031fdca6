import { isUtf8 } from 'node:buffer';
import type { CodecType } from './codec';
import { compactJson } from './json/compact';

// fatal: a frame that is not valid UTF-8 is a decode error, not a string with U+FFFD in it
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The last frame decoded and its string. A string passing through a pipeline
 * unchanged is encoded again by the offramp right after the onramp decoded
 * it; since equal strings have equal UTF-8 bytes, the frame itself is the
 * encoding, and the copy (the costliest step of a string passthrough) is
 * skipped. A memo, not state: it never changes what encode returns.
 */
let lastFrame: Buffer | undefined;
let lastText: string | undefined;

/** string: UTF-8 text in; a string out as is, binary as is, anything else as compact JSON. */
export const string: CodecType = {
  name: 'string',
  summary: 'UTF-8 text in; a string out as is, binary as is, other values as compact JSON.',
  mimeTypes: ['text/plain', 'text/html'],
  create: () => ({
    name: 'string',
    decode(data) {
      const text = decoder.decode(data);
      lastFrame = data;
      lastText = text;
      return text;
    },
    encode(value) {
      if (typeof value === 'string') return value === lastText && lastFrame !== undefined ? lastFrame : Buffer.from(value, 'utf8');
      if (value instanceof Uint8Array) return Buffer.from(value);
      return Buffer.from(compactJson(value), 'utf8');
    },
    // exactly the frames decode accepts (valid UTF-8, a BOM kept as U+FEFF, the empty frame
    // as ''), and the string of one encodes back to its very bytes
    roundTrips: isUtf8,
  }),
};
