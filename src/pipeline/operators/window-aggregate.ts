import { Observable } from '../../core/rx';
import type { PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import type { AggregatorPlan } from '../window/aggregator';
import { PartitionedAggregators } from '../window/partitions';
import { IdleClock } from '../window/idle-clock';
import type { PartitionedState, StateValue } from '../../core/state';
import { compileCall } from '../window/calls';
import { durationMs, duration } from '../../schema/duration';
import { compileEventExpression, frameKeysOf, type EventExpression } from '../window/expressions';
import { windowSchema, windowSpec } from '../window/windows';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';
import { compileCel } from '../cel/engine';
import { nodeUrl } from './_shared/support';

const expr = (description: string) => s.string({ minLength: 1, description });

const configSchema = s.object(
  {
    window: windowSchema,
    time: expr('CEL: the event time (epoch ms, or a timestamp); processing time (the runtime scheduler) when absent'),
    allowed_lateness: duration('event time only: how long after its end a window still takes events (default 0)'),
    idle_timeout: duration(
      "event time only: a source partition without events for this long of reading (time its source read nothing does not count) stops holding its windows open; they close as the other partitions' watermark passes them (default 10s)",
    ),
    group_by: s.record(expr('CEL expression'), { description: 'output field -> CEL expression; one group when absent' }),
    aggregate: {
      ...s.record(expr('aggregate call'), { description: 'output field -> aggregate call, e.g. count(), sum(event.size), percentile(event.ms, 0.99)' }),
      minProperties: 1,
    },
    where: expr('CEL: only events for which this is true are aggregated (the others are acked at once)'),
    having: expr('CEL over the output fields: only groups for which this is true are emitted'),
    window_fields: s.object(
      {
        start: s.string({ minLength: 1, description: "output field for the window's start (epoch ms)" }),
        end: s.string({ minLength: 1, description: "output field for the window's end (epoch ms)" }),
      },
      { description: "write the window's bounds into each output's data too (they are always in meta window)" },
    ),
    max_groups: s.integer({
      minimum: 1,
      description: 'groups per window (open sessions or count windows in all); an event of a new group past it goes to overflow (default 10000)',
    }),
    on_shutdown: s.literals(['emit', 'drop'], {
      description: 'when the pipeline stops: emit the open windows marked partial (default), or drop them and fail their events back to the sources',
    }),
  },
  {
    description: 'Aggregates events per group over tumbling, sliding, session or count windows; one event per group per window when it closes.',
    required: ['window', 'aggregate'],
  },
);

/** A source partition without events this long stops holding its windows open (event time). */
const DEFAULT_IDLE_TIMEOUT_MS = 10_000;

/** window, time, allowed_lateness, idle_timeout, group_by, aggregate, where, having, max_groups, on_shutdown: docs/stream-processing.md */
export type WindowAggregateConfig = Input<typeof configSchema>;

/** Compiles a config; every error names the node and the field. */
export function compilePlan(config: WindowAggregateConfig, nodeId: string, uid = 0): AggregatorPlan {
  const fail = (field: string, err: unknown) => invalid(`window::aggregate node ${nodeId}: ${field}: ${(err as Error).message}`);
  const compile = (field: string, source: string): EventExpression => {
    try {
      return compileEventExpression(source);
    } catch (err) {
      throw fail(field, err);
    }
  };
  let window;
  try {
    window = windowSpec(config.window);
  } catch (err) {
    throw invalid(`window::aggregate node ${nodeId}: ${(err as Error).message}`);
  }
  if (config.allowed_lateness !== undefined && config.time === undefined) {
    throw invalid(`window::aggregate node ${nodeId}: allowed_lateness: only with time (event-time windows); processing-time windows are never late`);
  }
  if (config.idle_timeout !== undefined && config.time === undefined) {
    throw invalid(`window::aggregate node ${nodeId}: idle_timeout: only with time (event-time windows); processing-time windows close on the clock`);
  }
  let lateness = 0;
  let idleTimeout = DEFAULT_IDLE_TIMEOUT_MS;
  try {
    if (config.allowed_lateness !== undefined) lateness = durationMs(config.allowed_lateness, 'allowed_lateness');
    if (config.idle_timeout !== undefined) idleTimeout = durationMs(config.idle_timeout, 'idle_timeout');
  } catch (err) {
    throw invalid(`window::aggregate node ${nodeId}: ${(err as Error).message}`);
  }
  const calls = Object.entries(config.aggregate).map(([field, source]) => {
    try {
      return compileCall(field, source);
    } catch (err) {
      throw fail(`aggregate.${field}`, err);
    }
  });
  const groupBy = Object.entries(config.group_by ?? {}).map(([field, source]) => [field, compile(`group_by.${field}`, source)] as const);
  const clash = groupBy.find(([field]) => field in config.aggregate);
  if (clash) throw invalid(`window::aggregate node ${nodeId}: group_by.${clash[0]}: the output field is also an aggregate field`);
  const windowFields = config.window_fields ?? {};
  for (const bound of ['start', 'end'] as const) {
    const field = windowFields[bound];
    if (field === undefined) continue;
    const taken = field in config.aggregate ? 'an aggregate field' : groupBy.some(([f]) => f === field) ? 'a group_by field' : undefined;
    if (taken) throw invalid(`window::aggregate node ${nodeId}: window_fields.${bound}: the output field ${JSON.stringify(field)} is also ${taken}`);
  }
  if (windowFields.start !== undefined && windowFields.start === windowFields.end) {
    throw invalid(`window::aggregate node ${nodeId}: window_fields: start and end name the same field ${JSON.stringify(windowFields.start)}`);
  }
  let having;
  if (config.having !== undefined) {
    try {
      having = compileCel(config.having);
    } catch (err) {
      throw fail('having', err);
    }
  }
  const time = config.time === undefined ? undefined : compile('time', config.time);
  const where = config.where === undefined ? undefined : compile('where', config.where);
  return {
    nodeId,
    uid,
    window,
    time,
    lateness,
    idleTimeout,
    groupBy,
    calls,
    where,
    having,
    windowFields,
    maxGroups: config.max_groups ?? 10_000,
    onShutdown: config.on_shutdown ?? 'emit',
    frameKeys: frameKeysOf([time, where, ...groupBy.map(([, e]) => e), ...calls.flatMap((c) => c.args)]),
  };
}

/**
 * The node: an Aggregator per source partition (window/partitions.ts) fed by
 * the input, its timers on the runtime's scheduler. Its state, per
 * partition, is the `state` the runtime saves and restores (core/state.ts).
 */
export function windowAggregateNode(config: WindowAggregateConfig, ctx: OperatorContext): OperatorNode {
  const plan = compilePlan(config, ctx.nodeId, ctx.uid);
  // insights arrive outside a subscription (after the output left); the subscription's aggregators answer them
  let current: PartitionedAggregators | undefined;
  // restored before the first subscription (the runtime restores, then events flow): kept until it subscribes
  const waiting = new Map<string, ReadonlyMap<string, StateValue>>();
  let savedHeld = false;
  // outlives a subscription: a source that stopped reading before it stays stopped for the next
  const idleClock = new IdleClock(ctx.scheduler);
  const state: PartitionedState = {
    partitions: () => current?.partitions() ?? [...waiting.keys()],
    snapshot: (partition) => current?.snapshot(partition) ?? new Map(waiting.get(partition) ?? []),
    takeChanges: () => current?.takeChanges() ?? new Map(),
    restore: (partition, entries) => (current ? current.restore(partition, entries) : void waiting.set(partition, entries)),
    release: (partition) => (current ? current.release(partition) : void waiting.delete(partition)),
    watermarks: () => current?.watermarks() ?? {},
    savedWithSources: () => {
      savedHeld = true;
      current?.savedWithSources();
    },
    sourceReading: (source, reading) => idleClock.sourceReading(source, reading),
  };
  return {
    ports: ['late', 'overflow', 'err'],
    state,
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        const aggregator = new PartitionedAggregators(
          plan,
          ctx.scheduler,
          (out) => subscriber.next(out),
          (i) => ctx.insight(i),
          nodeUrl(ctx),
          plan.idleTimeout,
          idleClock,
        );
        if (savedHeld) aggregator.savedWithSources();
        for (const [partition, entries] of waiting) aggregator.restore(partition, entries);
        waiting.clear();
        current = aggregator;
        const sub = input.subscribe({
          next: (event) => aggregator.push(event),
          error: (err: unknown) => subscriber.error(err),
          complete: () => {
            aggregator.flush();
            subscriber.complete();
          },
        });
        return () => {
          aggregator.dispose();
          sub.unsubscribe();
        };
      }),
    onInsight: (insight) => (current ? current.onInsight(insight) : insight),
  };
}

/** window::aggregate */
export const windowAggregate: OperatorType<WindowAggregateConfig> = {
  name: 'window::aggregate',
  examples: [{ window: { size: '10s' }, aggregate: { n: 'count()' } }],
  outputPorts: () => ['late', 'overflow', 'err'],
  configSchema,
  validate: (config, nodeId) => void compilePlan(config, nodeId),
  create: (config, ctx) => windowAggregateNode(config, ctx),
};
