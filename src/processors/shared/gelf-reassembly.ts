import type { PreprocessorType } from '../processor';
import { errorWithFrames, positiveIntegerProperty, processorSchema, withDefaults } from './options';
import { duration, durationMs } from '../../schema/duration';

/** A chunked GELF datagram: magic, 8-byte message id, sequence number, sequence count, data. */
export const GELF_CHUNK_MAGIC = [0x1e, 0x0f] as const;
export const GELF_CHUNK_HEADER = 12;
export const GELF_MAX_CHUNKS = 128;

interface PartialMessage {
  parts: (Buffer | undefined)[];
  missing: number;
  /** ingest time of its first chunk, for the age limit */
  firstNs: bigint;
}

/**
 * Reassembles chunked GELF messages (for `gelf-chunking` and
 * `gelf-chunking-tcp`). A datagram without the chunk magic is a whole message
 * (plain or compressed GELF) and passes through. Time comes from the frames'
 * ingest times, so the age limit needs no clock.
 *
 * Bounds, so a lossy network cannot grow memory without end: at most
 * `max_messages` (default 1000) incomplete messages, the oldest dropped
 * first, and none older than `timeout_ms` (default 5000). Each drop is
 * reported as an error; the chunk's completed messages still travel on it.
 * A repeated chunk (a duplicated datagram) is ignored.
 */
export function gelfReassembly(name: string, summary: string, finishMessage: (message: Buffer) => Buffer): PreprocessorType {
  const configSchema = processorSchema(summary, {
    max_messages: positiveIntegerProperty(1000, 'most incomplete messages kept; beyond it the oldest is dropped (an error)'),
    timeout_ms: duration('age (by ingest time) after which an incomplete message is dropped (an error)', { default: 5000 }),
  });
  return {
    name,
    configSchema,
    create(config) {
      const limits = withDefaults(configSchema, config);
      const maxMessages = limits.max_messages;
      const timeoutNs = BigInt(Math.round(durationMs(limits.timeout_ms, 'timeout_ms') * 1e6));
      const partial = new Map<string, PartialMessage>(); // insertion order = arrival order of first chunks
      return {
        process(chunk, ctx) {
          const frames: Buffer[] = [];
          const dropped = expire(partial, ctx.ingestNs - timeoutNs);
          if (chunk.length < 2 || chunk[0] !== GELF_CHUNK_MAGIC[0] || chunk[1] !== GELF_CHUNK_MAGIC[1]) {
            frames.push(finishMessage(chunk));
          } else {
            if (chunk.length < GELF_CHUNK_HEADER) throw errorWithFrames(`${name}: chunk of ${chunk.length} bytes is shorter than its header`, frames);
            const id = chunk.toString('hex', 2, 10);
            const seq = chunk[10];
            const count = chunk[11];
            if (count === 0 || count > GELF_MAX_CHUNKS || seq >= count) {
              throw errorWithFrames(`${name}: bad chunk ${seq} of ${count} for message ${id}`, frames);
            }
            let message = partial.get(id);
            if (!message) {
              message = { parts: new Array<Buffer | undefined>(count), missing: count, firstNs: ctx.ingestNs };
              partial.set(id, message);
              while (partial.size > maxMessages) {
                // the map is over its limit, so not empty
                const [oldest] = partial.keys();
                partial.delete(oldest);
                dropped.push(`${oldest} (too many incomplete messages)`);
              }
            }
            if (message.parts.length !== count) throw errorWithFrames(`${name}: message ${id} changed its chunk count`, frames);
            if (message.parts[seq] === undefined) {
              message.parts[seq] = Buffer.from(chunk.subarray(GELF_CHUNK_HEADER)); // a copy: the datagram buffer may be reused
              message.missing--;
            }
            if (message.missing === 0) {
              partial.delete(id);
              frames.push(finishMessage(Buffer.concat(message.parts as Buffer[])));
            }
          }
          if (dropped.length > 0) throw errorWithFrames(`${name}: dropped incomplete messages ${dropped.join(', ')}`, frames);
          return frames;
        },
      };
    },
  };
}

function expire(partial: Map<string, PartialMessage>, cutoffNs: bigint): string[] {
  const dropped: string[] = [];
  for (const [id, message] of partial) {
    if (message.firstNs >= cutoffNs) break; // later entries arrived later
    partial.delete(id);
    dropped.push(`${id} (timed out)`);
  }
  return dropped;
}
