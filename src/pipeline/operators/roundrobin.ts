import { Observable } from '../../core/rx';
import type { PortEvent } from '../../core/event';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { markOwn, nodeUrl, ownMeta } from './_shared/support';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    outputs: s.array(s.string({ minLength: 1 }), {
      minItems: 1,
      uniqueItems: true,
      default: ['out'],
      description: 'output ports to spread events over',
    }),
  },
  { description: 'Spreads events over its outputs in turn, skipping outputs whose downstream triggered the circuit breaker.' },
);

export type RoundRobinConfig = Input<typeof configSchema>;

/**
 * Spreads events over its outputs in turn, skipping outputs whose
 * downstream signalled trigger (about an event sent there) until they
 * restore. With every output closed, events go to `overflow` and the upstream
 * breaker is triggered; it is restored as soon as one output reopens.
 */
/** Its outputs (besides `out`) and `overflow`. */
function roundRobinPorts(config: RoundRobinConfig): string[] {
  return [...(config.outputs ?? ['out']).filter((o) => o !== 'out'), 'overflow'];
}

export function roundRobinNode(config: RoundRobinConfig, ctx: OperatorContext): OperatorNode {
  const outputs = config.outputs ?? ['out'];
  const open = outputs.map(() => true);
  const from = nodeUrl(ctx);
  let nextIndex = 0;
  let allClosed = false;

  const update = () => {
    const none = open.every((o) => !o);
    if (none !== allClosed) {
      allClosed = none;
      ctx.insight({ kind: none ? 'trigger' : 'restore', from });
    }
  };

  return {
    ports: roundRobinPorts(config),
    apply: (input) =>
      new Observable<PortEvent>((subscriber) =>
        input.subscribe({
          next: (event) => {
            for (let i = 0; i < outputs.length; i++) {
              const idx = (nextIndex + i) % outputs.length;
              if (!open[idx]) continue;
              nextIndex = (idx + 1) % outputs.length;
              return subscriber.next({ port: outputs[idx], event: markOwn(event, ctx.uid, idx) });
            }
            subscriber.next({ port: 'overflow', event });
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        }),
      ),
    onInsight(insight) {
      const idx = ownMeta(insight, ctx.uid);
      // breaker signals without an event of ours (plain offramp ones) go on untouched
      if (typeof idx !== 'number' || idx < 0 || idx >= outputs.length) return insight;
      if (insight.kind === 'trigger' || insight.kind === 'restore') {
        open[idx] = insight.kind === 'restore';
        update();
        return null; // replaced by the aggregate signal above
      }
      return insight;
    },
  };
}

/** qos::roundrobin */
export const roundrobin: OperatorType<RoundRobinConfig> = {
  name: 'qos::roundrobin',
  examples: [{}, { outputs: ['a', 'b'] }],
  outputPorts: (config) => roundRobinPorts(config),
  configSchema,
  create: (config, ctx) => roundRobinNode(config, ctx),
};
