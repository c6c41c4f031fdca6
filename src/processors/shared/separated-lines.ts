import type { PreprocessorType } from '../processor';
import { errorWithFrames, positiveIntegerProperty, preview, processorSchema, separatorProperty, withDefaults } from './options';

const DEFAULT_MAX_LENGTH = 1_048_576;
const MAX_LENGTH_DESCRIPTION = 'longest line kept, in bytes, without its separator; a longer line is skipped with an error';

/**
 * Splits on a one-byte separator, carrying a partial line across chunks.
 * Empty lines are frames too (use `remove-empty` to drop them). A line longer
 * than `max_length` bytes is skipped with an error that names its first
 * bytes; the chunk's good lines still travel on the error's `frames`, and
 * the buffer never grows past the limit. At the end of the stream the last
 * line is a frame even without a separator after it.
 */
export function separatedLines(name: string, summary: string, defaultSeparator: string, configurable: boolean): PreprocessorType {
  const configSchema = processorSchema(summary, {
    ...(configurable ? { separator: separatorProperty(defaultSeparator, 'the byte lines end with, as a one-character ASCII string') } : {}),
    max_length: positiveIntegerProperty(DEFAULT_MAX_LENGTH, MAX_LENGTH_DESCRIPTION),
  });
  return {
    name,
    splits: true,
    configSchema,
    create(config) {
      const options = withDefaults(configSchema, config);
      const separator = (options.separator ?? defaultSeparator).charCodeAt(0);
      const maxLength = options.max_length;
      let carry: Buffer | null = null;
      let skipping = false; // inside an over-long line: drop bytes until the next separator
      return {
        process(chunk) {
          const frames: Buffer[] = [];
          let problem: string | null = null;
          let start = 0;
          for (let end = chunk.indexOf(separator); end !== -1; end = chunk.indexOf(separator, start)) {
            const piece = chunk.subarray(start, end);
            start = end + 1;
            if (skipping) {
              skipping = false;
              continue;
            }
            const line: Buffer = carry ? Buffer.concat([carry, piece]) : piece;
            carry = null;
            if (line.length > maxLength) problem ??= overlong(name, maxLength, line);
            else frames.push(line);
          }
          if (start < chunk.length && !skipping) {
            const rest = chunk.subarray(start);
            if ((carry?.length ?? 0) + rest.length > maxLength) {
              problem ??= overlong(name, maxLength, carry ? Buffer.concat([carry, rest]) : rest);
              carry = null;
              skipping = true;
            } else {
              // a copy: the reader may reuse the chunk's memory before the line is complete
              carry = carry ? Buffer.concat([carry, rest]) : Buffer.from(rest);
            }
          }
          if (problem) throw errorWithFrames(problem, frames);
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
}

function overlong(name: string, max: number, line: Buffer): string {
  return `${name}: line longer than ${max} bytes skipped, starting ${preview(line)}`;
}

/**
 * Splits each chunk on its own, with no buffer and no limit: for transports
 * whose reads never cut a line (one datagram, one message). A separator at
 * the very end does not make an empty last frame.
 */
export function unbufferedLines(name: string, summary: string, separator: number): PreprocessorType {
  return {
    name,
    splits: true,
    configSchema: processorSchema(summary),
    create() {
      return {
        process(chunk) {
          const frames: Buffer[] = [];
          let start = 0;
          for (let end = chunk.indexOf(separator); end !== -1; end = chunk.indexOf(separator, start)) {
            frames.push(chunk.subarray(start, end));
            start = end + 1;
          }
          if (start < chunk.length) frames.push(chunk.subarray(start));
          return frames;
        },
      };
    },
  };
}
