import type { PreprocessorType } from '../processor';
import { ByteQueue } from '../shared/byte-queue';
import { errorWithFrames, positiveIntegerProperty, processorSchema, withDefaults } from '../shared/options';

const HEADER = 8;

const configSchema = processorSchema('Cuts frames written as a big-endian u64 length and then that many bytes, buffered across chunks.', {
  max_length: positiveIntegerProperty(64 * 1024 * 1024, 'largest frame length accepted, in bytes; a longer one is an error and drops the buffered bytes'),
});

/**
 * length-prefixed: frames of a big-endian u64 length then that many bytes,
 * buffered across chunks. A header is read as soon as its 8 bytes are there
 * (the original waited for a 9th byte, so a zero-length frame at the end of
 * a read stalled). A length above `max_length` (default 64 MiB) means the
 * stream is not what it should be: an error, and the buffer is dropped since
 * nothing after it can be trusted.
 */
export const lengthPrefixed: PreprocessorType = {
  name: 'length-prefixed',
  splits: true,
  configSchema,
  create(config) {
    const { max_length: maxLength } = withDefaults(configSchema, config);
    const pending = new ByteQueue();
    return {
      process(chunk) {
        pending.push(chunk);
        const frames: Buffer[] = [];
        while (pending.length >= HEADER) {
          const length = pending.peek(HEADER).readBigUInt64BE(0);
          if (length > BigInt(maxLength)) {
            pending.clear();
            throw errorWithFrames(`length-prefixed: frame length ${length} exceeds max_length ${maxLength}`, frames);
          }
          if (pending.length < HEADER + Number(length)) break;
          pending.take(HEADER);
          frames.push(pending.take(Number(length)));
        }
        return frames;
      },
      finish() {
        const left = pending.length;
        pending.clear();
        if (left > 0) throw errorWithFrames(`length-prefixed: stream ended inside a frame (${left} bytes left)`, []);
        return [];
      },
    };
  },
};
