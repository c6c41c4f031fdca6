import type { PreprocessorType } from '../processor';
import { processorSchema } from '../shared/options';

/**
 * ingest-ns: each chunk starts with its ingest time, a big-endian u64 of
 * nanoseconds (as the ingest-ns postprocessor writes it); that replaces the
 * frame's ingest time and the rest of the chunk is the frame.
 */
export const ingestNs: PreprocessorType = {
  name: 'ingest-ns',
  configSchema: processorSchema('Reads the ingest time (big-endian u64 nanoseconds) from the first 8 bytes of each chunk; the rest is the frame.'),
  create() {
    return {
      process(chunk, ctx) {
        if (chunk.length < 8) throw new Error(`ingest-ns: a chunk of ${chunk.length} bytes has no 8-byte timestamp`);
        ctx.ingestNs = chunk.readBigUInt64BE(0);
        return [chunk.subarray(8)];
      },
    };
  },
};
