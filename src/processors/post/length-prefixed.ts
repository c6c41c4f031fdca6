import type { PostprocessorType } from '../processor';
import { processorSchema } from '../shared/options';

/** length-prefixed: prefixes each frame with its length as a big-endian u64. */
export const lengthPrefixed: PostprocessorType = {
  name: 'length-prefixed',
  configSchema: processorSchema('Prefixes each frame with its length as a big-endian u64.'),
  create() {
    return {
      process(frame) {
        const header = Buffer.alloc(8);
        header.writeBigUInt64BE(BigInt(frame.length));
        return [Buffer.concat([header, frame])];
      },
    };
  },
};
