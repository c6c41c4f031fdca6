import { Observable, type Subscription } from '../../core/rx';
import type { EddyEvent, EventId, PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { groupKey } from '../window/aggregator';
import { durationMs, durationSchema } from '../../schema/duration';
import { EventScope, compileEventExpression, type EventExpression } from '../window/expressions';
import { idMinter, memberContraflow, withError } from './support';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const STRATEGIES = ['first', 'last', 'concat', 'concat_newline', 'array', 'sum', 'min', 'max'] as const;
type Strategy = (typeof STRATEGIES)[number];

const strategyEnum = s.literals(STRATEGIES);

const configSchema = s.object(
  {
    group_by: s.record(s.string({ minLength: 1 }), { description: 'output field -> CEL; one group when absent' }),
    starts_when: s.string({ minLength: 1, description: 'CEL: an event for which this is true starts a new reduction' }),
    ends_when: s.string({ minLength: 1, description: 'CEL: an event for which this is true is the last of its reduction' }),
    timeout: durationSchema('a reduction is emitted after this long without an event of its group (default 30s)'),
    max_events: s.integer({ minimum: 1, description: 'a reduction is emitted at this many events (default 1000)' }),
    max_groups: s.integer({ minimum: 1, description: 'open reductions at once; an event of a new group past it goes to overflow (default 10000)' }),
    merge: s.record(s.anyOf([strategyEnum, s.object({ strategy: strategyEnum, separator: s.string() }, { required: ['strategy'] })]), {
      description:
        "field -> strategy (first, last, concat, concat_newline, array, sum, min, max) or {strategy: concat, separator}; other fields keep the first event's value",
    }),
  },
  { description: 'Merges consecutive events of a group into one until ends_when, before starts_when, at max_events or after a quiet timeout.' },
);

export type ReduceConfig = Input<typeof configSchema>;

interface FieldMerge {
  readonly field: string;
  readonly strategy: Strategy;
  readonly separator: string;
}

interface Plan {
  readonly groupBy: ReadonlyArray<readonly [string, EventExpression]>;
  readonly startsWhen?: EventExpression;
  readonly endsWhen?: EventExpression;
  readonly timeout: number;
  readonly maxEvents: number;
  readonly maxGroups: number;
  readonly merges: readonly FieldMerge[];
}

function compile(config: ReduceConfig, nodeId: string): Plan {
  const where = `generic::reduce node ${nodeId}`;
  const expr = (field: string, source: string) => {
    try {
      return compileEventExpression(source);
    } catch (err) {
      throw invalid(`${where}: ${field}: ${(err as Error).message}`);
    }
  };
  let timeout = 30_000;
  try {
    if (config.timeout !== undefined) timeout = durationMs(config.timeout, 'timeout');
  } catch (err) {
    throw invalid(`${where}: ${(err as Error).message}`);
  }
  const merges = Object.entries(config.merge ?? {}).map(([field, spec]): FieldMerge => {
    const strategy = typeof spec === 'string' ? spec : spec.strategy;
    const separator = typeof spec === 'string' ? undefined : spec.separator;
    if (separator !== undefined && strategy !== 'concat') throw invalid(`${where}: merge.${field}.separator: only with strategy concat`);
    return { field, strategy, separator: strategy === 'concat_newline' ? '\n' : (separator ?? ' ') };
  });
  return {
    groupBy: Object.entries(config.group_by ?? {}).map(([f, s]) => [f, expr(`group_by.${f}`, s)] as const),
    startsWhen: config.starts_when === undefined ? undefined : expr('starts_when', config.starts_when),
    endsWhen: config.ends_when === undefined ? undefined : expr('ends_when', config.ends_when),
    timeout,
    maxEvents: config.max_events ?? 1000,
    maxGroups: config.max_groups ?? 10_000,
    merges,
  };
}

/** One open reduction: its member events so far, merged only when it is emitted. */
class Reduction {
  readonly members: EddyEvent[] = [];
  timer?: Subscription;
  /** scheduler time of its last event: the quiet timeout runs from here */
  last = 0;
}

/**
 * Merges consecutive events of a group into one: a multi-line stack trace
 * into one event. A reduction ends at `ends_when`, before `starts_when`, at
 * `max_events`, or after `timeout` without an event of its group (scheduler
 * time); what is open when the input completes is emitted then.
 */
export function reduceNode(config: ReduceConfig, ctx: OperatorContext): OperatorNode {
  const plan = compile(config, ctx.nodeId);
  const fail = (event: EddyEvent, field: string, err: unknown): PortEvent => ({
    port: 'err',
    event: withError(event, `generic::reduce node ${ctx.nodeId}: ${field}: ${(err as Error).message}`),
  });
  return {
    ports: ['overflow', 'err'],
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        const mint = idMinter(ctx.uid);
        const open = new Map<string, Reduction>();
        const emit = (key: string, r: Reduction) => {
          r.timer?.unsubscribe();
          if (open.get(key) === r) open.delete(key);
          if (r.members.length > 0) subscriber.next({ port: 'out', event: reduced(r.members, plan.merges, mint()) });
        };
        const quiet = (key: string, r: Reduction) => {
          const due = r.last + plan.timeout - ctx.scheduler.now();
          if (due > 0) r.timer = ctx.scheduler.schedule(() => quiet(key, r), due);
          else emit(key, r);
        };
        const sub = input.subscribe({
          next: (event) => {
            const scope = new EventScope(event);
            let field = 'group_by';
            let key: string;
            let starts = false;
            let ends = false;
            try {
              const values = plan.groupBy.map(([name, e]) => ((field = `group_by.${name}`), e.evaluate(scope)));
              key = groupKey(values);
              field = 'starts_when';
              if (plan.startsWhen) starts = bool(plan.startsWhen.evaluate(scope));
              field = 'ends_when';
              if (plan.endsWhen) ends = bool(plan.endsWhen.evaluate(scope));
            } catch (err) {
              subscriber.next(fail(event, field, err));
              return;
            }
            let r = open.get(key);
            if (r && starts) {
              emit(key, r);
              r = undefined;
            }
            if (!r) {
              if (open.size >= plan.maxGroups) {
                subscriber.next({ port: 'overflow', event });
                return;
              }
              r = new Reduction();
              open.set(key, r);
              const started = r;
              r.timer = ctx.scheduler.schedule(() => quiet(key, started), plan.timeout);
            }
            r.members.push(event);
            r.last = ctx.scheduler.now();
            if (ends || r.members.length >= plan.maxEvents) emit(key, r);
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => {
            for (const [key, r] of [...open]) emit(key, r);
            subscriber.complete();
          },
        });
        return () => {
          for (const r of open.values()) r.timer?.unsubscribe();
          sub.unsubscribe();
        };
      }),
  };
}

function bool(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new Error(`must be a bool, got ${value === null ? 'null' : typeof value}`);
  return value;
}

/**
 * The reduced event: the first member's data and meta with the merged fields;
 * a fresh id tracking every member (an ack or fail of it reaches them all, as
 * for a batch); transactional when any member was; meta `reduced` = the count.
 */
function reduced(members: readonly EddyEvent[], merges: readonly FieldMerge[], id: EventId): EddyEvent {
  const first = members[0];
  const base =
    first.data !== null && typeof first.data === 'object' && !Array.isArray(first.data) ? (first.data as Record<string, unknown>) : { value: first.data };
  const data: Record<string, unknown> = { ...base };
  for (const m of merges) {
    const values = members.map((e) => (e.data as Record<string, unknown> | null)?.[m.field]).filter((v) => v !== undefined);
    if (values.length > 0) data[m.field] = mergeValues(m, values);
  }
  return {
    id,
    data,
    meta: { ...first.meta, reduced: members.length },
    ingestNs: first.ingestNs,
    originUri: first.originUri,
    isBatch: false,
    ...memberContraflow(members),
  };
}

function mergeValues(m: FieldMerge, values: readonly unknown[]): unknown {
  switch (m.strategy) {
    case 'first':
      return values[0];
    case 'last':
      return values[values.length - 1];
    case 'array':
      return [...values];
    case 'concat':
    case 'concat_newline':
      return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(m.separator);
    case 'sum':
    case 'min':
    case 'max': {
      const nums = values.filter((v): v is number | bigint => typeof v === 'number' || typeof v === 'bigint');
      if (nums.length === 0) return values[0];
      if (m.strategy === 'sum') {
        // exact for integers (the json codec's big integers included), a double as soon as one value is not an integer
        if (nums.every((n) => typeof n === 'bigint' || Number.isInteger(n))) {
          const total = nums.reduce<bigint>((s, n) => s + BigInt(n), 0n);
          return Number.isSafeInteger(Number(total)) ? Number(total) : total;
        }
        return nums.reduce<number>((s, n) => s + Number(n), 0);
      }
      return nums.reduce((best, n) => ((m.strategy === 'min' ? n < best : n > best) ? n : best));
    }
  }
}

/** generic::reduce */
export const reduce: OperatorType<ReduceConfig> = {
  name: 'generic::reduce',
  outputPorts: () => ['overflow', 'err'],
  configSchema,
  validate: (config, nodeId) => void compile(config, nodeId),
  create: (config, ctx) => reduceNode(config, ctx),
};
