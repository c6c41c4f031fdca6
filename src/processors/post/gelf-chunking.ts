import { randomBytes } from 'node:crypto';
import type { PostprocessorType } from '../processor';
import { GELF_CHUNK_HEADER, GELF_CHUNK_MAGIC, GELF_MAX_CHUNKS } from '../shared/gelf-reassembly';
import { positiveIntegerProperty, processorSchema, withDefaults } from '../shared/options';

/**
 * gelf-chunking: splits every frame into GELF chunks of at most `chunk_size`
 * (default 8180) data bytes, always, even when one chunk suffices, so that a
 * receiver never mistakes a frame for a chunk. Message ids are a random
 * 64-bit start per instance, counting up, so two senders (or one restarted)
 * do not collide as the original's ids from 0 did. More than 128 chunks is an
 * error, as GELF allows no more.
 */
const configSchema = processorSchema('Splits every frame into GELF chunks (at most 128), message ids from a random 64-bit start.', {
  chunk_size: positiveIntegerProperty(8180, 'data bytes per chunk, not counting the 12-byte chunk header'),
});

export const gelfChunking: PostprocessorType = {
  name: 'gelf-chunking',
  configSchema,
  create(config) {
    const { chunk_size: chunkSize } = withDefaults(configSchema, config);
    let nextId = randomBytes(8).readBigUInt64BE(0);
    return {
      process(frame) {
        const count = Math.max(1, Math.ceil(frame.length / chunkSize));
        if (count > GELF_MAX_CHUNKS) {
          throw new Error(`gelf-chunking: a ${frame.length}-byte frame needs ${count} chunks, more than ${GELF_MAX_CHUNKS}`);
        }
        const id = nextId;
        nextId = BigInt.asUintN(64, nextId + 1n);
        const chunks: Buffer[] = [];
        for (let seq = 0; seq < count; seq++) {
          const data = frame.subarray(seq * chunkSize, (seq + 1) * chunkSize);
          const chunk = Buffer.alloc(GELF_CHUNK_HEADER + data.length);
          chunk[0] = GELF_CHUNK_MAGIC[0];
          chunk[1] = GELF_CHUNK_MAGIC[1];
          chunk.writeBigUInt64BE(id, 2);
          chunk[10] = seq;
          chunk[11] = count;
          data.copy(chunk, GELF_CHUNK_HEADER);
          chunks.push(chunk);
        }
        return chunks;
      },
    };
  },
};
