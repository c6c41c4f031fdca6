import type { CodecType } from './codec';

const empty = Buffer.alloc(0);

/** null: every frame decodes to `null` (still an event); every value encodes to no bytes. */
export const nullCodec: CodecType = {
  name: 'null',
  summary: 'Every frame decodes to `null`; every value encodes to no bytes.',
  create: () => ({
    name: 'null',
    decode: () => null,
    encode: () => empty,
  }),
};
