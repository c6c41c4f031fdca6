/**
 * An application's own onramp type: `example::range` reads the numbers
 * `from` up to (not including) `to`, one event `{n}` each, then ends.
 *
 * It reads through `ctx.pullLoop`, the runtime's breaker-aware loop: while a
 * circuit breaker downstream is triggered, no step runs, so nothing is read
 * that could not be delivered. Register it with `runtime.registerOnramp(range)`.
 *
 * ```yaml
 * onramp:
 *   - id: numbers
 *     type: example::range
 *     config: { from: 1, to: 1000 }
 * ```
 */
import type { Frame, OnrampType } from 'eddy';

export interface RangeConfig {
  from: number;
  to: number;
}

export const range: OnrampType<RangeConfig> = {
  name: 'example::range',
  defaultCodec: 'json',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['to'],
    properties: {
      from: { type: 'integer', default: 0, description: 'the first number' },
      to: { type: 'integer', description: 'one past the last number' },
    },
  },
  // checked at publish time, so a bad range is a 400 naming the field, never a silent empty source
  validate(config) {
    if (config.to < config.from) throw new Error(`to: ${config.to} is below from (${config.from})`);
  },
  create(config, ctx) {
    const originUri = `example-range://${ctx.hostname}/${config.from}-${config.to}`;
    let next = config.from;
    return {
      // a bounded step per turn keeps the API and timers responsive while it reads
      frames: ctx.pullLoop<Frame>((subscriber) => {
        for (let i = 0; i < 100 && next < config.to; i++) subscriber.next({ stream: 0, value: { n: next++ }, originUri });
        return next < config.to ? 'more' : 'done';
      }),
    };
  },
};
