import { map } from '../../core/rx';
import type { PortEvent } from '../../core/event';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { ackTimeout, ackTimeoutMs, isBad } from './backpressure';
import { markOwn, ownMeta } from './_shared/support';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    timeout: ackTimeout(),
    step_down: s.number({ minimum: 0, maximum: 1, default: 0.05, description: 'pass ratio lost per bad insight' }),
    step_up: s.number({ minimum: 0, maximum: 1, default: 0.001, description: 'pass ratio regained per good insight' }),
  },
  {
    description: 'Lets through a share of events that shrinks on bad insights and grows on good ones; the rest go to `overflow`.',
    required: ['timeout'],
  },
);

export type PercentileConfig = Input<typeof configSchema>;

/**
 * Lets through a share of the events that shrinks on bad insights and grows
 * back on good ones; the rest go to `overflow`. Which events pass is decided
 * by their ingest time, as in the original runtime, so it needs no random source.
 */
export function percentileNode(config: PercentileConfig, ctx: OperatorContext): OperatorNode {
  const stepDown = config.step_down ?? 0.05;
  const stepUp = config.step_up ?? 0.001;
  const timeoutMs = ackTimeoutMs(config.timeout);
  let perc = 1;
  return {
    ports: ['overflow'],
    apply: (input) =>
      input.pipe(
        map((event): PortEvent => {
          const own = markOwn(event, ctx.uid, true, true);
          const draw = Number(event.ingestNs % 65535n) / 65535;
          return { port: draw <= perc ? 'out' : 'overflow', event: own };
        }),
      ),
    onInsight(insight) {
      if (ownMeta(insight, ctx.uid) === undefined) return insight;
      // clamp and round away float drift so the ratio can return to exactly 1
      if (isBad(insight, timeoutMs)) perc = Math.max(0, round(perc - stepDown));
      else perc = Math.min(1, round(perc + stepUp));
      return insight;
    },
  };
}

const round = (x: number) => Math.round(x * 1e9) / 1e9;

/** qos::percentile */
export const percentile: OperatorType<PercentileConfig> = {
  name: 'qos::percentile',
  examples: [{ timeout: 100 }],
  outputPorts: () => ['overflow'],
  configSchema,
  create: (config, ctx) => percentileNode(config, ctx),
};
