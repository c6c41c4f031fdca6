import { isUtf8 } from 'node:buffer';
import type { Writable } from 'node:stream';
import type { OfframpType } from '../connector';
import { BufferedWriter } from '../_shared/buffered-writer';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

/** The same config for both; the description names the stream. */
function configSchema(name: 'stdout' | 'stderr') {
  return s.object(
    {
      prefix: s.string({ default: '', description: 'written before each event' }),
      raw: s.boolean({ default: false, description: 'write non-UTF-8 payloads as they are instead of as a byte list' }),
    },
    { description: `Writes each event to standard ${name === 'stdout' ? 'output' : 'error'}, one line per event.` },
  );
}

const NEWLINE = Buffer.from('\n');

/** Writers are shared per process stream, so the system offramp and custom ones interleave whole lines. */
const writers = new WeakMap<Writable, BufferedWriter>();

function stdOfframp(name: 'stdout' | 'stderr', stream: () => Writable): OfframpType<Static<ReturnType<typeof configSchema>>> {
  return {
    name,
    defaultCodec: 'json',
    placement: 'every-worker', // whole lines, each written at once (docs/workers.md)
    autoAck: true,
    // the process stream's own buffer (its 'drain') is the backpressure, not a count of events waiting for their write
    maxInFlight: () => 1 << 20,
    example: { prefix: '' },
    configSchema: configSchema(name),
    create(config, ctx) {
      const out = stream();
      let writer = writers.get(out);
      if (!writer) {
        // a reader that goes away (`eddy ... | head -1`: EPIPE) fails the events sent from then on; eddy keeps running
        const broke = (err: Error) => ctx.logger.warn(`${name}: cannot write any more (${err.message}); events sent to ${name} fail from now on`);
        writers.set(out, (writer = new BufferedWriter(out, undefined, broke)));
      }
      const w = writer;
      // every offramp on the stream triggers its own breaker when the stream backs up
      const unwatch = w.watch({ full: ctx.trigger, drained: ctx.restore });
      const prefix = Buffer.from(config.prefix, 'utf8');
      return {
        // acked once the process stream has taken the bytes (its write callback), not when they are buffered here
        send(payloads) {
          let written: Promise<void> = Promise.resolve();
          for (const payload of payloads) {
            const body = config.raw || isUtf8(payload) ? payload : Buffer.from(`[${[...payload].join(', ')}]`);
            // the line's parts go to the turn's one flush together: no copy of each line here
            written = prefix.length > 0 ? w.write(prefix, body, NEWLINE) : w.write(body, NEWLINE);
          }
          return written;
        },
        close: () => {
          unwatch();
          return w.close(false);
        },
      };
    },
  };
}

export const stdout = stdOfframp('stdout', () => process.stdout);
export const stderr = stdOfframp('stderr', () => process.stderr);
