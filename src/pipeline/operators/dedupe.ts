import { Observable } from '../../core/rx';
import type { PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import { Lru } from '../../core/lru';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { durationMs, durationSchema } from '../../schema/duration';
import { EventScope, compileEventExpression, type EventExpression } from '../window/expressions';
import { withError } from './support';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    key: s.string({ minLength: 1, description: "CEL: the event's key, e.g. event.request_id" }),
    within: durationSchema('a key counts as seen for this long after its first sighting (default: as long as it is remembered)'),
    max_keys: s.integer({ minimum: 1, description: 'keys remembered, least recently seen forgotten first (default 100000)' }),
  },
  {
    description: 'Passes the first event of each key; repeats within `within` among the last `max_keys` keys go to `duplicate`.',
    required: ['key'],
  },
);

export type DedupeConfig = Input<typeof configSchema>;

interface Plan {
  readonly key: EventExpression;
  readonly within: number;
  readonly maxKeys: number;
}

function compile(config: DedupeConfig, nodeId: string): Plan {
  const where = `generic::dedupe node ${nodeId}`;
  let key: EventExpression;
  try {
    key = compileEventExpression(config.key);
  } catch (err) {
    throw invalid(`${where}: key: ${(err as Error).message}`);
  }
  let within = Infinity;
  try {
    if (config.within !== undefined) within = durationMs(config.within, 'within');
  } catch (err) {
    throw invalid(`${where}: ${(err as Error).message}`);
  }
  return { key, within, maxKeys: config.max_keys ?? 100_000 };
}

/**
 * Passes the first event of each key and sends the repeats to `duplicate`.
 * A key is remembered from its first sighting for `within` (scheduler time),
 * among the `max_keys` most recently seen keys; a repeat does not extend it.
 */
export function dedupeNode(config: DedupeConfig, ctx: OperatorContext): OperatorNode {
  const plan = compile(config, ctx.nodeId);
  return {
    ports: ['duplicate', 'err'],
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        // key -> when it was first seen
        const seen = new Lru<string, number>(plan.maxKeys);
        return input.subscribe({
          next: (event) => {
            let key: string;
            try {
              key = keyString(plan.key.evaluate(new EventScope(event)));
            } catch (err) {
              subscriber.next({ port: 'err', event: withError(event, `generic::dedupe node ${ctx.nodeId}: key: ${(err as Error).message}`) });
              return;
            }
            const now = ctx.scheduler.now();
            const first = seen.get(key);
            if (first !== undefined && now - first < plan.within) {
              subscriber.next({ port: 'duplicate', event });
              return;
            }
            seen.set(key, now);
            subscriber.next({ port: 'out', event });
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        });
      }),
  };
}

/** Equal keys give equal strings: 1 and 1.0 are one number; a string "1" is another key. */
function keyString(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : `\u0000n${v}`) : v)) ?? 'null';
}

/** generic::dedupe */
export const dedupe: OperatorType<DedupeConfig> = {
  name: 'generic::dedupe',
  outputPorts: () => ['duplicate', 'err'],
  configSchema,
  validate: (config, nodeId) => void compile(config, nodeId),
  create: (config, ctx) => dedupeNode(config, ctx),
};
