import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import type { OfframpContext, OfframpType, OnrampType, Frame } from '../../../src/connectors/connector';
import { Registries } from '../../../src/runtime/registries';
import { Runtime } from '../../../src/runtime/runtime';

/** What a probe onramp saw: how many events it read, and the acks and fails that came back (by event seq). */
export interface ProbeLog {
  read: number;
  acks: number[];
  fails: number[];
  /** while set, the probe reads no event past this seq (it waits, polling): lets a test send a sentinel event later */
  hold?: number;
}

/**
 * A test onramp: `count` events `{id: n}` (n = the event's seq), read in
 * steps of 16 with the circuit breaker checked before each one, and a record
 * of the acks and fails that reach it. Transactional unless told otherwise.
 */
export function probeOnramp(log: ProbeLog): OnrampType<{ count: number; transactional: boolean; data?: Record<string, unknown> }> {
  return {
    name: 'probe',
    defaultCodec: 'json',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['count'],
      properties: {
        count: { type: 'integer', minimum: 0 },
        transactional: { type: 'boolean', default: true },
        data: { type: 'object', description: 'extra fields for every event' },
      },
    },
    create(config, ctx) {
      let n = 0;
      const frames = ctx.pullLoop<Frame>(
        (subscriber) => {
          const limit = Math.min(config.count, log.hold ?? Infinity);
          for (let i = 0; i < 16 && n < limit && ctx.gate.isOpen; i++) {
            log.read = ++n;
            subscriber.next({ stream: 0, value: { id: n, ...config.data }, originUri: 'svc-probe://test' });
          }
          if (n >= config.count) return 'done';
          return n >= limit ? 5 : 'more'; // held: look again in 5 ms
        },
        () => undefined, // stays open: acks keep arriving after the last event
      );
      return {
        frames,
        transactional: config.transactional,
        onAck: (id) => void log.acks.push(id.seq),
        onFail: (id) => void log.fails.push(id.seq),
      };
    },
  };
}

export type SendFn = (event: EddyEvent, ctx: OfframpContext) => Promise<void> | void;

/** A test offramp type whose sink calls `send`; `concurrency` sets the offramp's in-flight limit. */
export function testOfframp(name: string, send: SendFn, autoAck = true): OfframpType<{ concurrency?: number }> {
  return {
    name,
    defaultCodec: 'json',
    autoAck,
    configSchema: { type: 'object', additionalProperties: false, properties: { concurrency: { type: 'integer', minimum: 1 } } },
    create: (_config, ctx) => ({ send: (_payloads, event) => send(event, ctx) }),
  };
}

/** The `id` field of an event's data. */
export const idOf = (e: EddyEvent): number => (e.data as { id: number }).id;

export interface Flow {
  runtime: Runtime;
  /** URL of the onramp instance */
  onramp: string;
  /** shuts the runtime down: sends in flight finish first, and nothing reaches a sink afterwards */
  stop(): Promise<void>;
}

export interface FlowSpec {
  registries: Registries;
  onramp: { type: string; config: Record<string, unknown> };
  /** chained in order between `in` and `out`; a passthrough when absent */
  nodes?: { id: string; type: string; config?: Record<string, unknown> }[];
  offramp: { type: string; config?: Record<string, unknown> };
}

/** Starts an in-process runtime running onramp -> pipeline -> offramp as binding `flow`, instance `main`. */
export async function startFlow(spec: FlowSpec): Promise<Flow> {
  const runtime = new Runtime({ registries: spec.registries, logger: createLogger('silent') });
  await runtime.start();
  const nodes = spec.nodes ?? [{ id: 'pass', type: 'passthrough' }];
  const links: Record<string, string[]> = { in: [nodes[0].id] };
  nodes.forEach((n, i) => (links[n.id] = [i + 1 < nodes.length ? nodes[i + 1].id : 'out']));
  runtime.publish('onramp', { id: 'src', type: spec.onramp.type, config: spec.onramp.config });
  runtime.publish('pipeline', { id: 'p', interface: { inputs: ['in'], outputs: ['out'] }, nodes, links });
  runtime.publish('offramp', { id: 'dst', type: spec.offramp.type, config: spec.offramp.config ?? {} });
  runtime.publish('binding', {
    id: 'flow',
    links: {
      '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
      '/pipeline/p/{instance}/out': ['/offramp/dst/{instance}/in'],
    },
  });
  await runtime.activate('binding', 'flow', 'main', {});
  return { runtime, onramp: '/onramp/src/main', stop: () => runtime.shutdown() };
}

/**
 * Starts onramp `src` -> pipeline `front` (a passthrough) -> pipeline `back`
 * (the one node given) -> offramp `dst` as binding `flow`, instance `main`:
 * a flow where what a source tells the stateful nodes crosses two pipelines.
 */
export async function startTwoPipelineFlow(
  registries: Registries,
  onrampType: string,
  node: { id: string; type: string; config?: Record<string, unknown> },
  offrampType: string,
): Promise<Runtime> {
  const runtime = new Runtime({ registries, logger: createLogger('silent') });
  await runtime.start();
  runtime.publish('onramp', { id: 'src', type: onrampType, config: {} });
  runtime.publish('pipeline', {
    id: 'front',
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'pass', type: 'passthrough' }],
    links: { in: ['pass'], pass: ['out'] },
  });
  runtime.publish('pipeline', { id: 'back', interface: { inputs: ['in'], outputs: ['out'] }, nodes: [node], links: { in: [node.id], [node.id]: ['out'] } });
  runtime.publish('offramp', { id: 'dst', type: offrampType, config: {} });
  runtime.publish('binding', {
    id: 'flow',
    links: {
      '/onramp/src/{instance}/out': ['/pipeline/front/{instance}/in'],
      '/pipeline/front/{instance}/out': ['/pipeline/back/{instance}/in'],
      '/pipeline/back/{instance}/out': ['/offramp/dst/{instance}/in'],
    },
  });
  await runtime.activate('binding', 'flow', 'main', {});
  return runtime;
}

/** Registries with the builtins plus the given test types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test types of any config type
export function registriesWith(onramps: OnrampType<any>[], offramps: OfframpType<any>[]): Registries {
  const r = Registries.withBuiltins();
  for (const t of onramps) r.onramps.register(t.name, t);
  for (const t of offramps) r.offramps.register(t.name, t);
  return r;
}

export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
