import { Observable } from '../../core/rx';
import type { PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { EventScope, compileEventExpression, type EventExpression } from '../window/expressions';
import { withError } from './_shared/support';
import { groupKey } from '../window/aggregator';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    one_in: s.integer({
      minimum: 1,
      description: 'keep one event in this many; with key, the keys whose hash is 0 modulo this (this or per_second, not both)',
    }),
    per_second: s.integer({ minimum: 1, description: 'keep at most this many events per second (per key with key)' }),
    key: s.string({ minLength: 1, description: "CEL: the event's key" }),
    max_keys: s.integer({ minimum: 1, description: 'per_second with key: keys tracked per second; events of further keys are dropped (default 10000)' }),
  },
  {
    description: 'Keeps 1 in N events (deterministically per key with `key`) or at most R per second; the others leave on `dropped`.',
    // one of the two (validate refuses both): so the reference and `eddy new` show that one is required
    anyOf: [{ required: ['one_in'] }, { required: ['per_second'] }],
  },
);

export type SampleConfig = Input<typeof configSchema>;

type Decide = (key: string | undefined, now: number) => boolean;

/**
 * 1 in N without a key keeps the 1st, the N+1th, … event. With a key it keeps
 * every event of the keys whose FNV-1a hash is 0 modulo N, so the same key is
 * kept (or dropped) everywhere: in every worker, process and restart.
 */
function oneIn(n: number, keyed: boolean): Decide {
  let seen = 0;
  if (keyed) return (key) => fnv1a(key ?? '') % n === 0; // keyed: the node always gives a key
  return () => seen++ % n === 0;
}

/** At most `limit` events per one-second window of scheduler time, per key when keyed (at most `maxKeys` keys a second). */
function perSecond(limit: number, maxKeys: number): Decide {
  let second = -Infinity;
  const counts = new Map<string, number>();
  return (key, now) => {
    const current = Math.floor(now / 1000);
    if (current !== second) {
      second = current;
      counts.clear();
    }
    const k = key ?? '';
    const n = counts.get(k);
    if (n === undefined && counts.size >= maxKeys) return false;
    if ((n ?? 0) >= limit) return false;
    counts.set(k, (n ?? 0) + 1);
    return true;
  };
}

function compile(config: SampleConfig, nodeId: string): { key?: EventExpression; decide: () => Decide } {
  const where = `generic::sample node ${nodeId}`;
  if ((config.one_in === undefined) === (config.per_second === undefined)) throw invalid(`${where}: give exactly one of one_in and per_second`);
  let key: EventExpression | undefined;
  try {
    key = config.key === undefined ? undefined : compileEventExpression(config.key);
  } catch (err) {
    throw invalid(`${where}: key: ${(err as Error).message}`);
  }
  if (config.max_keys !== undefined && (config.per_second === undefined || key === undefined))
    throw invalid(`${where}: max_keys: only with per_second and key`);
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- exactly one of one_in and per_second is given (checked above)
  const decide = () => (config.one_in !== undefined ? oneIn(config.one_in, key !== undefined) : perSecond(config.per_second!, config.max_keys ?? 10_000));
  return { key, decide };
}

/** Keeps a sample of the events on `out`; the others leave on `dropped`. */
export function sampleNode(config: SampleConfig, ctx: OperatorContext): OperatorNode {
  const plan = compile(config, ctx.nodeId);
  return {
    ports: ['dropped', 'err'],
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        const decide = plan.decide();
        return input.subscribe({
          next: (event) => {
            let key: string | undefined;
            if (plan.key) {
              try {
                key = keyString(plan.key.evaluate(new EventScope(event)));
              } catch (err) {
                subscriber.next({ port: 'err', event: withError(event, `generic::sample node ${ctx.nodeId}: key: ${(err as Error).message}`) });
                return;
              }
            }
            subscriber.next({ port: decide(key, ctx.scheduler.now()) ? 'out' : 'dropped', event });
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        });
      }),
  };
}

/**
 * The key as window::aggregate and generic::reduce group by it: a string is
 * itself (so a string key hashes as it always has), any other value its JSON
 * text behind a marker no string key can match, so the string "1" and the
 * number 1 are two keys, as in generic::dedupe and window::aggregate.
 */
function keyString(value: unknown): string {
  return groupKey([value]);
}

/** 32-bit FNV-1a over the key's UTF-16 code units: small, stable, and the same in every process. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** generic::sample */
export const sample: OperatorType<SampleConfig> = {
  name: 'generic::sample',
  examples: [{ one_in: 10 }],
  outputPorts: () => ['dropped', 'err'],
  configSchema,
  validate: (config, nodeId) => void compile(config, nodeId),
  create: (config, ctx) => sampleNode(config, ctx),
};
