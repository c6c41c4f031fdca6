import type { PreprocessorType } from '../processor';
import { ByteQueue } from '../shared/byte-queue';
import { errorWithFrames, onlyKeys, positiveInteger } from '../shared/options';

const HEADER = 8;

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
  create(config) {
    onlyKeys('length-prefixed', config, ['max_length']);
    const maxLength = positiveInteger('length-prefixed', config, 'max_length', 64 * 1024 * 1024);
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
