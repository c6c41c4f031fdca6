import type { CodecType } from './codec';

/** JSON: one document per frame, compact on the way out, key order kept. */
export const json: CodecType = {
  name: 'json',
  mimeTypes: ['application/json'],
  create: () => ({
    name: 'json',
    decode(data) {
      if (data.length === 0) throw new Error('json: empty input (Eof at character 0)');
      return JSON.parse(data.toString('utf8'));
    },
    encode(value) {
      return Buffer.from(JSON.stringify(value, bigintReplacer) ?? 'null', 'utf8');
    },
  }),
};

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}
