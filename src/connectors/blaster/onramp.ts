import { defer, from, mergeMap } from 'rxjs';
import type { Frame, OnrampType } from '../connector';
import { pullLoop } from '../_shared/pull-loop';
import { readMaybeXz, splitLines } from '../_shared/read-source';

interface BlasterConfig {
  source: string;
  interval?: number;
  iters?: number;
  base64: boolean;
}

/** Events emitted per macrotask at full speed: large enough to amortise the turn, small enough to stay responsive. */
const CHUNK = 512;

/**
 * blaster (benchmarks only): replays the lines of a file (xz when named
 * `.xz`) in a loop. `interval` paces it in nanoseconds between events;
 * `iters` stops it after that many events. Reads nothing while the circuit
 * breaker is triggered.
 */
export const blaster: OnrampType<BlasterConfig> = {
  name: 'blaster',
  defaultCodec: 'json',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['source'],
    properties: {
      source: { type: 'string', minLength: 1, description: 'file to replay, one event per line' },
      interval: { type: 'integer', minimum: 0, description: 'nanoseconds between events; absent or 0 means as fast as possible' },
      iters: { type: 'integer', minimum: 1, description: 'number of events to send, then stop' },
      base64: { type: 'boolean', default: false, description: 'base64-decode each line' },
    },
  },
  create(config, ctx) {
    const originUri = `svc-blaster://${ctx.hostname}/${config.source.replace(/^\//, '')}`;
    const load = async () => {
      let lines = splitLines(await readMaybeXz(config.source)).filter((l) => l.length > 0);
      if (config.base64) lines = lines.map((l) => Buffer.from(l.toString('latin1'), 'base64'));
      if (lines.length === 0) throw new Error(`blaster: ${config.source} has no lines to replay`);
      return lines;
    };
    const frames = defer(() => from(load())).pipe(
      mergeMap((lines) => {
        const limit = config.iters ?? Infinity;
        const intervalNs = config.interval ?? 0;
        let sent = 0;
        let started = 0;
        return pullLoop<Frame>(ctx.breaker, (subscriber) => {
          let due = CHUNK;
          if (intervalNs > 0) {
            const now = performance.now();
            if (sent === 0) started = now;
            // how many events should be out by now, so sub-millisecond intervals keep their rate
            due = Math.min(CHUNK, Math.floor(((now - started) * 1e6) / intervalNs) + 1 - sent);
            if (due <= 0) return Math.max(1, Math.floor(intervalNs / 1e6));
          }
          // the breaker is checked per event: a trigger raised by this very step stops it at once
          for (let i = 0; i < due && sent < limit && ctx.breaker.isOpen; i++) {
            subscriber.next({ stream: 0, data: lines[sent % lines.length], originUri });
            sent++;
          }
          if (sent >= limit) return 'done';
          return intervalNs > 0 ? 0 : 'more';
        });
      }),
    );
    return { frames };
  },
};
