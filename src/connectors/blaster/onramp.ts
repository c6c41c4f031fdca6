import { Observable, type Subscriber } from '../../core/rx';
import { nowNs } from '../../core/clock';
import type { Frame, OnrampType } from '../connector';
import { readPayloadLines } from '../_shared/read-source';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';

/** A bare number is nanoseconds, as in the original. */
const INTERVAL = { unit: 'ns', zero: 'as fast as possible' } as const;

const configSchema = s.object(
  {
    source: s.string({ path: 'read', minLength: 1, description: 'file to replay, one event per line' }),
    interval: duration('the time between events; absent means as fast as possible', INTERVAL),
    iters: s.integer({ minimum: 1, description: 'number of events to send, then stop' }),
    base64: s.boolean({ default: false, description: 'base64-decode each line' }),
  },
  { description: 'For benchmarks: replays the lines of a file, read into memory at creation, as fast as it can or at an interval.', required: ['source'] },
);

/**
 * Events emitted per macrotask at full speed, all with one ingest time (one
 * clock reading): large enough to amortise the turn and the clock, small
 * enough to stay responsive and to keep the latency the chunk adds (the last
 * event waits for the ones before it) well under a millisecond. 512 measured
 * no faster than 64 (bench/README.md).
 */
const CHUNK = 64;

/**
 * blaster (benchmarks only): replays the lines of a file (xz when named
 * `.xz`) in a loop. `interval` paces it in nanoseconds between events;
 * `iters` stops it after that many events. Reads nothing while the circuit
 * breaker is triggered. The file is read when the instance is created, so a
 * missing or empty file fails the activation.
 */
export const blaster: OnrampType<Static<typeof configSchema>> = {
  name: 'blaster',
  defaultCodec: 'json',
  placement: 'every-worker', // each worker replays the data (docs/workers.md)
  example: { source: 'data.json.xz', iters: 1000 },
  configSchema,
  async create(config, ctx) {
    const originUri = `svc-blaster://${ctx.hostname}/${config.source.replace(/^\//, '')}`;
    // read now: a missing, unreadable or empty source fails the activation (a 400 naming the onramp)
    let lines = await readPayloadLines(config.source).catch((err: unknown) => {
      throw new Error(`blaster: cannot read ${config.source}: ${err instanceof Error ? err.message : String(err)}`);
    });
    if (config.base64) lines = lines.map((l) => Buffer.from(l.toString('latin1'), 'base64'));
    if (lines.length === 0) throw new Error(`blaster: ${config.source} has no lines to replay`);
    // each subscription replays from the start; the pull loop feeds the subscriber directly
    const frames = new Observable<Frame>((subscriber) => ctx.pullLoop<Frame>(step(lines)).subscribe(subscriber));
    const step = (lines: Buffer[]) => {
      const limit = config.iters ?? Infinity;
      const intervalNs = config.interval === undefined ? 0 : Math.round(durationMs(config.interval, 'interval', INTERVAL) * 1e6);
      const gate = ctx.gate;
      let sent = 0;
      let started = 0;
      return (subscriber: Subscriber<Frame>) => {
        let due = CHUNK;
        if (intervalNs > 0) {
          const now = performance.now();
          if (sent === 0) started = now;
          // how many events should be out by now, so sub-millisecond intervals keep their rate
          due = Math.min(CHUNK, Math.floor(((now - started) * 1e6) / intervalNs) + 1 - sent);
          if (due <= 0) return Math.max(1, Math.floor(intervalNs / 1e6));
        }
        // At full speed the events of one chunk are read together: one clock
        // reading for all of them, so their latency includes waiting for the
        // ones before them in the chunk. Paced, each event is due on its own
        // and gets its own reading (a burst only exists because timers are
        // coarse).
        let ingestNs = nowNs();
        for (let i = 0; i < due && sent < limit; i++) {
          // the gate is checked between events, so a triggered breaker stops the chunk at once
          if (!gate.isOpen) break;
          if (intervalNs > 0 && i > 0) ingestNs = nowNs();
          subscriber.next({ stream: 0, data: lines[sent % lines.length], originUri, ingestNs });
          sent++;
        }
        if (sent >= limit) return 'done';
        // paced and caught up: wait for the next timer; behind (a full chunk went out): go on at once
        return intervalNs > 0 && due < CHUNK ? 0 : 'more';
      };
    };
    return { frames };
  },
};
