import type { CodecType } from './codec';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** string: UTF-8 text in; a string out as is, anything else as compact JSON. */
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
      if (Buffer.isBuffer(value)) return value;
      return Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
    },
  }),
};
