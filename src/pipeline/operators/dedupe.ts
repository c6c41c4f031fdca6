import { Observable } from '../../core/rx';
import type { PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { partitionOf, type StateValue } from '../../core/state';
import { showValue } from '../state-entry';
import { LruPartition, LruPartitionedState } from './_shared/lru-state';
import { durationMs, duration } from '../../schema/duration';
import { EventScope, compileEventExpression, type EventExpression } from '../window/expressions';
import { withError } from './_shared/support';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    key: s.string({ minLength: 1, description: "CEL: the event's key, e.g. event.request_id" }),
    within: duration('a key counts as seen for this long after its first sighting (default: as long as it is remembered)'),
    max_keys: s.integer({ minimum: 1, description: 'keys remembered per source partition, least recently seen forgotten first (default 100000)' }),
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
 * among the `max_keys` most recently seen keys of its source partition; a
 * repeat does not extend it. Keys are per partition (core/state.ts):
 * the same key in two partitions is two keys, so a partition's state can
 * move on its own.
 */
export function dedupeNode(config: DedupeConfig, ctx: OperatorContext): OperatorNode {
  const plan = compile(config, ctx.nodeId);
  // the node's state, not a subscription's: the runtime saves and restores it between events (the pipeline applies a node once)
  const state = new DedupeState(plan, `generic::dedupe node ${ctx.nodeId}`);
  return {
    ports: ['duplicate', 'err'],
    state,
    apply: (input) =>
      new Observable<PortEvent>((subscriber) =>
        input.subscribe({
          next: (event) => {
            let key: string;
            try {
              key = keyString(plan.key.evaluate(new EventScope(event)));
            } catch (err) {
              subscriber.next({ port: 'err', event: withError(event, `generic::dedupe node ${ctx.nodeId}: key: ${(err as Error).message}`) });
              return;
            }
            const repeat = state.seen(partitionOf(event), key, ctx.scheduler.now());
            subscriber.next({ port: repeat ? 'duplicate' : 'out', event });
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        }),
      ),
  };
}

/**
 * Per partition, an Lru of key -> the scheduler time it was first seen, and
 * so its entries: `"<key string>": <first-seen ms>`, least recently seen
 * first. A key expired by `within` stays until it is seen again or evicted,
 * as it always did: it still takes a place in the Lru, so a restored node
 * keeps it too and evicts exactly what the original would have.
 */
class DedupeState extends LruPartitionedState<number, LruPartition<number>> {
  constructor(
    private readonly plan: Plan,
    who: string,
  ) {
    super(who);
  }

  /** Whether `key` is a repeat in its partition at `now`; remembers it otherwise. */
  seen(partition: string, key: string, now: number): boolean {
    const part = this.partition(partition);
    const first = part.lru.get(key);
    if (first !== undefined) {
      // a repeat moves the key in the recency order: a change of its entry, or a replayed changelog would evict another key
      part.dirty?.add(key);
      if (now - first < this.plan.within) return true;
    }
    const evicted = part.lru.set(key, now);
    if (part.dirty !== undefined) {
      part.dirty.add(key);
      if (evicted !== undefined) part.dirty.add(evicted);
    }
    return false;
  }

  protected newPartition(): LruPartition<number> {
    return new LruPartition(this.plan.maxKeys);
  }

  protected encode(first: number): StateValue {
    return first;
  }

  protected decode(_key: string, value: StateValue): number {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`the first-seen time must be a number (scheduler ms), got ${showValue(value)}`);
    return value;
  }
}

/** A BigInt as its number where that is exact, else as a tagged string (`\u0000n…`). */
const bigIntKey = (_k: string, v: unknown) => (typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : `\u0000n${v}`) : v);

/** Equal keys give equal strings: 1 and 1.0 are one number; a string "1" is another key. */
function keyString(value: unknown): string {
  const text = JSON.stringify(value, bigIntKey) as string | undefined; // undefined for undefined or a function: a key too
  return text ?? 'null';
}

/** generic::dedupe */
export const dedupe: OperatorType<DedupeConfig> = {
  name: 'generic::dedupe',
  examples: [{ key: 'event.id' }],
  outputPorts: () => ['duplicate', 'err'],
  configSchema,
  validate: (config, nodeId) => void compile(config, nodeId),
  create: (config, ctx) => dedupeNode(config, ctx),
};
