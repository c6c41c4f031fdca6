import { Observable, interval } from '../../core/rx';
import { nowNs } from '../../core/clock';
import type { Frame, OnrampType } from '../connector';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Static } from '../../schema/typed';

const configSchema = s.object(
  { interval: duration('the time between ticks') },
  { description: 'Emits a tick event every `interval`.', required: ['interval'] },
);

/** metronome: a structured tick every `interval` ms; none while the circuit breaker is triggered. */
export const metronome: OnrampType<Static<typeof configSchema>> = {
  name: 'metronome',
  defaultCodec: 'json',
  example: { interval: 1000 },
  configSchema,
  create(config, ctx) {
    const intervalMs = durationMs(config.interval, 'interval');
    const originUri = `svc-metronome://${ctx.hostname}/${intervalMs}`;
    let paused = false;
    return {
      pause: () => void (paused = true),
      resume: () => void (paused = false),
      frames: new Observable<Frame>((subscriber) => {
        let id = 0;
        // on the runtime's scheduler, so a virtual-time runtime ticks in virtual time
        const ticks = interval(intervalMs, ctx.scheduler).subscribe(() => {
          if (paused) return;
          const ingestNs = nowNs();
          subscriber.next({ stream: 0, value: { onramp: 'metronome', ingest_ns: ingestNs, id: id++ }, originUri, ingestNs });
        });
        return () => ticks.unsubscribe();
      }),
    };
  },
};
