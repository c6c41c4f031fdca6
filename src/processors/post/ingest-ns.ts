import type { PostprocessorType } from '../processor';
import { processorSchema } from '../shared/options';

/** ingest-ns: prefixes each frame with its event's ingest time, a big-endian u64 of nanoseconds. */
export const ingestNs: PostprocessorType = {
  name: 'ingest-ns',
  configSchema: processorSchema("Prefixes each frame with its event's ingest time, a big-endian u64 of nanoseconds."),
  create() {
    return {
      process(frame, ctx) {
        const header = Buffer.alloc(8);
        header.writeBigUInt64BE(BigInt.asUintN(64, ctx.ingestNs));
        return [Buffer.concat([header, frame])];
      },
    };
  },
};
