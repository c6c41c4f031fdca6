import type { CodecType } from './codec';
import { compactJson } from './json/compact';

// fatal: a frame that is not valid UTF-8 is a decode error, not a string with U+FFFD in it
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** string: UTF-8 text in; a string out as is, binary as is, anything else as compact JSON. */
export const string: CodecType = {
  name: 'string',
  mimeTypes: ['text/plain', 'text/html'],
  create: () => ({
    name: 'string',
    decode(data) {
      return decoder.decode(data);
    },
    encode(value) {
      if (typeof value === 'string') return Buffer.from(value, 'utf8');
      if (value instanceof Uint8Array) return Buffer.from(value);
      return Buffer.from(compactJson(value), 'utf8');
    },
  }),
};
