import type { PreprocessorType } from '../processor';
import { ByteQueue } from '../shared/byte-queue';
import { errorWithFrames, positiveIntegerProperty, preview, processorSchema, withDefaults } from '../shared/options';

const MAX_DIGITS = 10; // a u32
const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;
const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

const configSchema = processorSchema('Cuts frames written as an ASCII decimal length, one whitespace byte, then that many bytes (RFC 6587 octet counting).', {
  max_length: positiveIntegerProperty(64 * 1024 * 1024, 'largest frame length accepted, in bytes; a longer one is an error and drops the buffered bytes'),
});

/**
 * textual-length-prefix: frames written as an ASCII decimal length, one
 * whitespace byte, then that many bytes (RFC 6587 octet counting, as syslog
 * over TCP uses), buffered across chunks. A malformed header or a length
 * above `max_length` (default 64 MiB) is an error and drops the buffer.
 */
export const textualLengthPrefix: PreprocessorType = {
  name: 'textual-length-prefix',
  splits: true,
  configSchema,
  create(config) {
    const { max_length: maxLength } = withDefaults(configSchema, config);
    const pending = new ByteQueue();
    const fail = (message: string, frames: Buffer[]) => {
      const shown = pending.length > 0 ? preview(pending.peek(Math.min(pending.length, 20))) : '""';
      pending.clear();
      return errorWithFrames(`textual-length-prefix: ${message}, at ${shown}`, frames);
    };
    return {
      process(chunk) {
        pending.push(chunk);
        const frames: Buffer[] = [];
        for (;;) {
          let digits = 0;
          while (digits <= MAX_DIGITS && digits < pending.length && isDigit(pending.byteAt(digits))) digits++;
          if (digits > MAX_DIGITS) throw fail('length has too many digits', frames);
          if (digits === pending.length) break; // the header is not complete yet
          if (digits === 0) throw fail('expected a decimal length', frames);
          if (!isWhitespace(pending.byteAt(digits))) throw fail('expected one whitespace byte after the length', frames);
          const length = Number(pending.peek(digits).toString('latin1'));
          if (length > maxLength) throw fail(`frame length ${length} exceeds max_length ${maxLength}`, frames);
          if (pending.length < digits + 1 + length) break;
          pending.take(digits + 1);
          frames.push(pending.take(length));
        }
        return frames;
      },
      finish() {
        const left = pending.length;
        pending.clear();
        if (left > 0) throw errorWithFrames(`textual-length-prefix: stream ended inside a frame (${left} bytes left)`, []);
        return [];
      },
    };
  },
};
