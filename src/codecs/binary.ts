import type { CodecType } from './codec';
import { compactJson } from './json/compact';

/**
 * binary: the frame's bytes as they are (a Buffer value); on the way out a
 * Buffer or Uint8Array as is, a string as UTF-8, anything else as compact JSON.
 * Its name is `binary` in every place (the original reported `bytes` from
 * one of them).
 */
export const binary: CodecType = {
  name: 'binary',
  summary: "The frame's bytes as they are (a binary value); a string encodes as UTF-8, other values as compact JSON.",
  mimeTypes: ['application/octet-stream'],
  create: () => ({
    name: 'binary',
    decode(data) {
      // a copy: the frame may be a view of a buffer its reader will reuse
      return Buffer.from(data);
    },
    encode(value) {
      if (value instanceof Uint8Array) return Buffer.from(value);
      if (typeof value === 'string') return Buffer.from(value, 'utf8');
      return Buffer.from(compactJson(value), 'utf8');
    },
  }),
};
