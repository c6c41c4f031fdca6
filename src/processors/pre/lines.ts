import type { PreprocessorType } from '../processor';

/**
 * lines: splits on a separator (default `\n`), carrying a partial line
 * across chunks. A line longer than `max_length` bytes is an error (with the
 * line's first bytes) and is skipped, instead of growing the buffer without bound.
 * The last line of a stream is emitted at its end even without a separator.
 */
export const lines: PreprocessorType = {
  name: 'lines',
  create(config) {
    const separator = typeof config.separator === 'string' ? config.separator.charCodeAt(0) : 10;
    const maxLength = typeof config.max_length === 'number' ? config.max_length : 1_048_576;
    let carry: Buffer | null = null;
    let skipping = false; // inside an over-long line, dropping bytes until the next separator
    return {
      process(chunk) {
        const frames: Buffer[] = [];
        let start = 0;
        let error: Error | null = null;
        for (let i = chunk.indexOf(separator); i !== -1; i = chunk.indexOf(separator, start)) {
          let line = chunk.subarray(start, i);
          if (carry) {
            line = Buffer.concat([carry, line]);
            carry = null;
          }
          start = i + 1;
          if (skipping) {
            skipping = false;
            continue;
          }
          if (line.length > maxLength) error ??= overlong(line, maxLength);
          else frames.push(line);
        }
        if (start < chunk.length && !skipping) {
          const rest = chunk.subarray(start);
          const pending = carry ? carry.length + rest.length : rest.length;
          if (pending > maxLength) {
            error ??= overlong(carry ? Buffer.concat([carry, rest]) : rest, maxLength);
            carry = null;
            skipping = true;
          } else {
            // copy: the caller may reuse the chunk's memory
            carry = carry ? Buffer.concat([carry, rest]) : Buffer.from(rest);
          }
        }
        if (error) throw Object.assign(error, { frames });
        return frames;
      },
      finish() {
        const last = carry;
        carry = null;
        skipping = false;
        return last && last.length > 0 ? [last] : [];
      },
    };
  },
};

function overlong(line: Buffer, max: number): Error {
  return new Error(`lines: line longer than ${max} bytes, starting ${JSON.stringify(line.subarray(0, 40).toString('utf8'))}`);
}
