import { Observable, type SchedulerLike, type Subscriber, type Subscription } from '../../core/rx';
import type { EddyEvent, EventId, Meta, PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import { setOwn } from '../../codecs/integers';
import { compactJson } from '../../codecs/json/compact';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { WHOLE, partitionOf, type StateValue } from '../../core/state';
import { packEntry, showValue, unpackEntry } from '../state-entry';
import { LruPartition, LruPartitionedState } from './_shared/lru-state';
import { groupKey } from '../window/aggregator';
import { durationMs, duration } from '../../schema/duration';
import { EventScope, compileEventExpression, type EventExpression } from '../window/expressions';
import { idMinter, memberContraflow, nodeUrl, withError } from './_shared/support';
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
    timeout: duration('a reduction is emitted after this long without an event of its group (default 30s)'),
    max_events: s.integer({ minimum: 1, description: 'a reduction is emitted at this many events (default 1000)' }),
    max_groups: s.integer({
      minimum: 1,
      description: 'open reductions at once per source partition; an event of a new group past it goes to overflow (default 10000)',
    }),
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
  readonly groupBy: readonly (readonly [string, EventExpression])[];
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

/**
 * Merges consecutive events of a group into one: a multi-line stack trace
 * into one event. A reduction ends at `ends_when`, before `starts_when`, at
 * `max_events`, or after `timeout` without an event of its group (scheduler
 * time); what is open when the input completes is emitted then.
 *
 * Groups are per source partition (core/state.ts), and so is
 * `max_groups`: a partition's reductions, and whether its next group
 * overflows, depend on its own events only, so its state can move to
 * another member and go on there exactly.
 */
export function reduceNode(config: ReduceConfig, ctx: OperatorContext): OperatorNode {
  const plan = compile(config, ctx.nodeId);
  const fail = (event: EddyEvent, field: string, err: unknown): PortEvent => ({
    port: 'err',
    event: withError(event, `generic::reduce node ${ctx.nodeId}: ${field}: ${(err as Error).message}`),
  });
  // the node's state, not a subscription's: the runtime saves and restores it between events (the pipeline applies a node once)
  const state = new ReduceState(plan, ctx);
  return {
    ports: ['overflow', 'err'],
    state,
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        state.attach(subscriber);
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
            state.event(event, key, starts, ends);
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => {
            state.complete();
            subscriber.complete();
          },
        });
        return () => {
          state.detach(subscriber);
          sub.unsubscribe();
        };
      }),
  };
}

/** One open reduction. */
class Reduction {
  /**
   * Its events since it opened here: merged when it is emitted or saved,
   * and tracked by the reduced event (its ack or fail reaches them). A
   * restored reduction starts with none: the events before the restore were
   * made durable by the checkpoint that saved it (their offsets committed),
   * so there is nobody left to ack; only their merged values come back.
   */
  readonly members: EddyEvent[] = [];
  /** the merge of its events before members[folded]: restored, or folded when it was saved */
  private fold: Fold | undefined;
  private folded = 0;

  constructor(
    /** its group's key: its entry's key */
    readonly key: string,
    /** when it opened, as a number increasing in the node: what is open at the end leaves in this order */
    readonly opened: number,
    fold?: Fold,
    /** events in it: members and those before a restore (meta `reduced`; max_events) */
    public count = 0,
    /** scheduler time of its last event: the quiet timeout runs from here */
    public last = 0,
  ) {
    this.fold = fold;
  }

  /**
   * Everything merged so far. The members are folded here, when the
   * reduction is emitted or saved, not as each event comes: the per-event
   * path only appends, and a member is folded once however often it is saved.
   */
  merged(merges: readonly FieldMerge[]): Fold {
    // a reduction without a fold has its first member (it opens with one)
    const fold = (this.fold ??= Fold.start(this.members[0], merges));
    for (; this.folded < this.members.length; this.folded++) fold.add(this.members[this.folded], merges);
    return fold;
  }
}

/** One partition's open reductions, in the order of their last event, and its quiet-timeout timer. */
class ReducePartition extends LruPartition<Reduction> {
  /**
   * One timer per partition, not per reduction: it is armed for the due
   * time of the oldest reduction (the order is the order of last events, so
   * the oldest is due first) and fires early when that one had an event
   * since; it then emits what is due, oldest first, and arms itself again.
   * Reductions due at the same time leave in one order, the partition's,
   * in a restored node too. The scheduler's clock is taken not to go back
   * (a wall clock stepped back, or a restore on a host whose clock is
   * behind, delays a reduction opened since by at most that step).
   */
  timer: Subscription | undefined;

  constructor(readonly name: string) {
    // no eviction: max_groups is checked before a group opens (a restore under a lower max_groups keeps them all)
    super(Infinity);
  }
}

/**
 * The reductions of every partition, their timers, and the contract's
 * methods. An entry is one open reduction, keyed by its group's key:
 *
 *     {"n": <events>, "last": <scheduler ms of its last event>, "opened": <order it opened in>,
 *      "head": {"data", "meta", "ingestNs", "originUri"}   (its first event's),
 *      "merge": {"<field>": <the field's merge so far>, ...}, "fix": [...]}
 *
 * A field's merge (only for fields that had a value): `first`, `last` the
 * value; `array` the values; `concat`, `concat_newline` the text so far;
 * `sum` `{first, exact, double}` (its first value, for when none is a
 * number; the exact integer total, null once a value was not an integer;
 * the double total) or `{first}` before a number; `min`, `max` `{first,
 * best}` or `{first}`. `fix` (state-entry.ts) brings back what JSON alone
 * would not: a Buffer anywhere in the head (a kafka key) or in a merged
 * value comes back a Buffer, so a reduce of Buffers (first, last, array of
 * them) emits the same Buffers after a restore; concat has already turned
 * one into its JSON text.
 */
class ReduceState extends LruPartitionedState<Reduction, ReducePartition> {
  private readonly mint: () => EventId;
  private readonly scheduler: SchedulerLike;
  /** the `opened` of the latest reduction; a restore moves it past those it brings */
  private opened = 0;
  /** where emissions go: the node's subscriber, while it is subscribed */
  private sink: Subscriber<PortEvent> | undefined;
  /** PartitionedState.savedWithSources: an event is acked once a reduction holds it */
  private savedHeld = false;
  private readonly raise: OperatorContext['insight'];
  private readonly from: string;

  constructor(
    private readonly plan: Plan,
    ctx: OperatorContext,
  ) {
    super(`generic::reduce node ${ctx.nodeId}`);
    this.mint = idMinter(ctx.uid);
    this.scheduler = ctx.scheduler;
    this.raise = (insight) => ctx.insight(insight);
    this.from = nodeUrl(ctx);
  }

  savedWithSources(): void {
    this.savedHeld = true;
  }

  /** The node is subscribed: timers run from now (a partition restored before it waited for this). */
  attach(sink: Subscriber<PortEvent>): void {
    if (this.sink !== undefined) throw new Error(`${this.who}: already subscribed: its state is the node's, one subscription at a time`);
    this.sink = sink;
    for (const [, part] of this.all()) this.arm(part);
  }

  /** The subscription ended: timers stop; the state stays for the runtime to save. */
  detach(sink: Subscriber<PortEvent>): void {
    if (this.sink !== sink) return;
    this.sink = undefined;
    for (const [, part] of this.all()) this.dropped(part);
  }

  /** One event whose group, starts_when and ends_when were evaluated. */
  event(event: EddyEvent, key: string, starts: boolean, ends: boolean): void {
    const part = this.partition(partitionOf(event));
    const open = part.lru;
    // a get makes the reduction the newest: it is about to have its last event
    let r = open.get(key);
    if (r !== undefined && starts) {
      this.emit(part, r);
      r = undefined;
    }
    if (r === undefined) {
      if (open.size >= this.plan.maxGroups) {
        this.sink?.next({ port: 'overflow', event });
        return;
      }
      r = new Reduction(key, ++this.opened);
      open.set(key, r);
    }
    r.members.push(event);
    // held by the reduction, whose state is saved with the source's offsets: done
    if (this.savedHeld && event.transactional) this.raise({ kind: 'ack', event, from: this.from });
    r.count++;
    r.last = this.scheduler.now();
    part.dirty?.add(key);
    if (ends || r.count >= this.plan.maxEvents) this.emit(part, r);
    else if (part.timer === undefined) this.arm(part);
  }

  /** The input completed: every open reduction leaves, partition by partition (by name), in the order they opened. */
  complete(): void {
    // saved with the sources' offsets: the open reductions stay in the saved state, for the next run to go on with
    if (this.savedHeld) return;
    const parts = [...this.all()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [, part] of parts) {
      const open = [...part.lru.entries()].map(([, r]) => r).sort((a, b) => a.opened - b.opened);
      for (const r of open) this.emit(part, r);
    }
  }

  private emit(part: ReducePartition, r: Reduction): void {
    part.lru.delete(r.key);
    part.dirty?.add(r.key);
    this.sink?.next({ port: 'out', event: this.reduced(part.name, r) });
  }

  /** Arms the partition's timer for its oldest reduction, unless armed, unsubscribed or empty. */
  private arm(part: ReducePartition): void {
    if (part.timer !== undefined || this.sink === undefined) return;
    const oldest = part.lru.peekOldest();
    if (oldest === undefined) return;
    const due = Math.max(0, oldest.last + this.plan.timeout - this.scheduler.now());
    part.timer = this.scheduler.schedule(() => {
      part.timer = undefined;
      this.quiet(part);
    }, due);
  }

  private quiet(part: ReducePartition): void {
    const now = this.scheduler.now();
    for (let r = part.lru.peekOldest(); r !== undefined && r.last + this.plan.timeout <= now; r = part.lru.peekOldest()) this.emit(part, r);
    this.arm(part);
  }

  /**
   * The reduced event: the first event's data and meta with the merged
   * fields; a fresh id tracking every member (an ack or fail of it reaches
   * them all, as for a batch); transactional when any member was; meta
   * `reduced` = the count; the partition of its events.
   */
  private reduced(partition: string, r: Reduction): EddyEvent {
    const merges = this.plan.merges;
    const fold = r.merged(merges);
    const head = fold.head;
    const base = isRecord(head.data) ? head.data : { value: head.data };
    const data: Record<string, unknown> = { ...base };
    for (let i = 0; i < merges.length; i++) if (fold.fields[i].any) data[merges[i].field] = fold.fields[i].result();
    const event: EddyEvent = {
      id: this.mint(),
      data,
      meta: { ...head.meta, reduced: r.count },
      ingestNs: head.ingestNs,
      originUri: head.originUri,
      isBatch: false,
      // acked already when held (savedWithSources): the output answers for none of them
      ...(this.savedHeld ? { tracked: [], transactional: false } : memberContraflow(r.members)),
    };
    // only a partitioned source's: an unpartitioned flow's events keep their shape
    if (partition !== WHOLE) event.partition = partition;
    return event;
  }

  protected newPartition(name: string): ReducePartition {
    return new ReducePartition(name);
  }

  protected override dropped(part: ReducePartition): void {
    part.timer?.unsubscribe();
    part.timer = undefined;
  }

  protected override restored(part: ReducePartition): void {
    // the time left of its oldest reduction, at least 0 (one overdue leaves as soon as the scheduler runs)
    this.arm(part);
  }

  protected encode(r: Reduction): StateValue {
    const merges = this.plan.merges;
    const fold = r.merged(merges);
    const merge: Record<string, unknown> = {};
    for (let i = 0; i < merges.length; i++) if (fold.fields[i].any) setOwn(merge, merges[i].field, fold.fields[i].saved());
    const { data, meta, ingestNs, originUri } = fold.head;
    return packEntry({ n: r.count, last: r.last, opened: r.opened, head: { data, meta, ingestNs, originUri }, merge });
  }

  protected decode(key: string, value: StateValue): Reduction {
    const entry = unpackEntry(value);
    const { n, last, opened, head, merge = {} } = entry;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1)
      throw new Error(`n: the count of its events must be a positive integer, got ${showValue(n)}`);
    if (typeof last !== 'number' || !Number.isFinite(last))
      throw new Error(`last: the time of its last event must be a number (scheduler ms), got ${showValue(last)}`);
    if (typeof opened !== 'number' || !Number.isSafeInteger(opened) || opened < 0) throw new Error(`opened: not a non-negative integer: ${showValue(opened)}`);
    if (!isRecord(head)) throw new Error(`head: not an object: ${showValue(head)}`);
    const { data, meta, ingestNs, originUri } = head;
    if (!isRecord(meta)) throw new Error(`head.meta: not an object: ${showValue(meta)}`);
    if (typeof ingestNs !== 'bigint') throw new Error(`head.ingestNs: not an integer: ${showValue(ingestNs)}`);
    if (typeof originUri !== 'string') throw new Error(`head.originUri: not a string: ${showValue(originUri)}`);
    if (!isRecord(merge)) throw new Error(`merge: not an object: ${showValue(merge)}`);
    // a field saved but no longer merged is left out; one merged now but not saved had no value yet
    const fields = this.plan.merges.map((m) => {
      if (!Object.hasOwn(merge, m.field)) return newFieldFold(m);
      try {
        return loadFieldFold(m, merge[m.field]);
      } catch (err) {
        throw new Error(`merge.${m.field} (${m.strategy}): ${(err as Error).message}`);
      }
    });
    // reductions opened here from now on open after it
    this.opened = Math.max(this.opened, opened);
    return new Reduction(key, opened, new Fold({ data, meta, ingestNs, originUri }, fields), n, last);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function bool(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new Error(`must be a bool, got ${value === null ? 'null' : typeof value}`);
  return value;
}

/** What the reduced event takes from its first event besides the merged fields. */
interface Head {
  /** the base of its data (a value that is not an object becomes `{value}`) */
  readonly data: unknown;
  readonly meta: Meta;
  readonly ingestNs: bigint;
  readonly originUri: string;
}

/** The merge of a reduction's events so far: its head, and each merged field's fold (in the order of `plan.merges`). */
class Fold {
  constructor(
    readonly head: Head,
    readonly fields: readonly FieldFold[],
  ) {}

  static start(first: EddyEvent, merges: readonly FieldMerge[]): Fold {
    const head = { data: first.data, meta: first.meta, ingestNs: first.ingestNs, originUri: first.originUri };
    return new Fold(head, merges.map(newFieldFold));
  }

  /** The event's values of the merged fields, those it has. */
  add(event: EddyEvent, merges: readonly FieldMerge[]): void {
    const data = event.data as Record<string, unknown> | null;
    for (let i = 0; i < merges.length; i++) {
      const value = data?.[merges[i].field];
      if (value !== undefined) this.fields[i].add(value);
    }
  }
}

/**
 * One merged field so far. A fold gets the field's values in member order,
 * and gives what the strategy gives over all of them at once: continuing a
 * restored fold with the events after it is the same as folding them all.
 */
interface FieldFold {
  /** a value was added */
  readonly any: boolean;
  add(value: unknown): void;
  /** the merged value, for the reduced event */
  result(): unknown;
  /** the fold, for an entry (packEntry copies it) */
  saved(): unknown;
}

function newFieldFold(m: FieldMerge): FieldFold {
  switch (m.strategy) {
    case 'first':
      return new FirstFold();
    case 'last':
      return new LastFold();
    case 'array':
      return new ArrayFold([]);
    case 'concat':
    case 'concat_newline':
      return new ConcatFold(m.separator);
    case 'sum':
      return new SumFold();
    case 'min':
    case 'max':
      return new BestFold(m.strategy);
  }
}

/** The fold an entry saved (after unpackEntry); throws an Error saying why it cannot. */
function loadFieldFold(m: FieldMerge, saved: unknown): FieldFold {
  switch (m.strategy) {
    case 'first':
    case 'last': {
      const fold = m.strategy === 'first' ? new FirstFold() : new LastFold();
      fold.add(saved);
      return fold;
    }
    case 'array':
      if (!Array.isArray(saved)) throw new Error(`not a list: ${showValue(saved)}`);
      return new ArrayFold(saved);
    case 'concat':
    case 'concat_newline':
      if (typeof saved !== 'string') throw new Error(`not a string: ${showValue(saved)}`);
      return new ConcatFold(m.separator, saved);
    case 'sum':
      return SumFold.load(saved);
    case 'min':
    case 'max':
      return BestFold.load(m.strategy, saved);
  }
}

class FirstFold implements FieldFold {
  any = false;
  private value: unknown;

  add(value: unknown): void {
    if (this.any) return;
    this.any = true;
    this.value = value;
  }

  result(): unknown {
    return this.value;
  }

  saved(): unknown {
    return this.value;
  }
}

class LastFold implements FieldFold {
  any = false;
  private value: unknown;

  add(value: unknown): void {
    this.any = true;
    this.value = value;
  }

  result(): unknown {
    return this.value;
  }

  saved(): unknown {
    return this.value;
  }
}

class ArrayFold implements FieldFold {
  constructor(private readonly values: unknown[]) {}

  get any(): boolean {
    return this.values.length > 0;
  }

  add(value: unknown): void {
    this.values.push(value);
  }

  result(): unknown {
    // the reduction ends with this: its array is the event's
    return this.values;
  }

  saved(): unknown {
    return this.values;
  }
}

class ConcatFold implements FieldFold {
  any: boolean;

  constructor(
    private readonly separator: string,
    private text?: string,
  ) {
    this.any = text !== undefined;
  }

  add(value: unknown): void {
    const part = typeof value === 'string' ? value : jsonText(value);
    this.text = this.any ? `${this.text}${this.separator}${part}` : part;
    this.any = true;
  }

  result(): unknown {
    return this.text;
  }

  saved(): unknown {
    return this.text;
  }
}

/**
 * A value that is not a string, as concat writes it: its JSON.stringify text
 * (nothing for undefined or a function, as a join writes them), or eddy's
 * JSON where that throws (a BigInt, which JSON.stringify refuses).
 */
function jsonText(value: unknown): string {
  try {
    const text = JSON.stringify(value) as string | undefined; // undefined for undefined or a function
    return text ?? '';
  } catch {
    return compactJson(value);
  }
}

/**
 * sum: over the numbers; exact while every one is an integer (big integers
 * too), else the double sum of them all in order (kept from the start, as a
 * sum computed at once would be); the first value when none is a number.
 */
class SumFold implements FieldFold {
  any = false;
  private first: unknown;
  private numbers = false;
  /** undefined once a number was not an integer */
  private exact: bigint | undefined = 0n;
  private double = 0;

  static load(saved: unknown): SumFold {
    if (!isRecord(saved) || !Object.hasOwn(saved, 'first')) throw new Error(`not {first, exact, double}: ${showValue(saved)}`);
    const fold = new SumFold();
    fold.any = true;
    fold.first = saved.first;
    if (!Object.hasOwn(saved, 'double')) return fold;
    const { exact, double } = saved;
    if (typeof double !== 'number') throw new Error(`double: not a number: ${showValue(double)}`);
    if (exact !== null && typeof exact !== 'bigint') throw new Error(`exact: not an integer or null: ${showValue(exact)}`);
    fold.numbers = true;
    fold.exact = exact ?? undefined;
    fold.double = double;
    return fold;
  }

  add(value: unknown): void {
    if (!this.any) {
      this.any = true;
      this.first = value;
    }
    if (typeof value !== 'number' && typeof value !== 'bigint') return;
    this.numbers = true;
    this.double += Number(value);
    if (this.exact !== undefined) this.exact = typeof value === 'bigint' || Number.isInteger(value) ? this.exact + BigInt(value) : undefined;
  }

  result(): unknown {
    if (!this.numbers) return this.first;
    if (this.exact === undefined) return this.double;
    return Number.isSafeInteger(Number(this.exact)) ? Number(this.exact) : this.exact;
  }

  saved(): unknown {
    // exact is a BigInt even when small: packEntry notes it, so it comes back a BigInt
    return this.numbers ? { first: this.first, exact: this.exact ?? null, double: this.double } : { first: this.first };
  }
}

/** min, max: over the numbers (the first of equals); the first value when none is a number. */
class BestFold implements FieldFold {
  any = false;
  private first: unknown;
  private best: number | bigint | undefined;

  constructor(private readonly strategy: 'min' | 'max') {}

  static load(strategy: 'min' | 'max', saved: unknown): BestFold {
    if (!isRecord(saved) || !Object.hasOwn(saved, 'first')) throw new Error(`not {first, best}: ${showValue(saved)}`);
    const fold = new BestFold(strategy);
    fold.any = true;
    fold.first = saved.first;
    if (!Object.hasOwn(saved, 'best')) return fold;
    const best = saved.best;
    if (typeof best !== 'number' && typeof best !== 'bigint') throw new Error(`best: not a number: ${showValue(best)}`);
    fold.best = best;
    return fold;
  }

  add(value: unknown): void {
    if (!this.any) {
      this.any = true;
      this.first = value;
    }
    if (typeof value !== 'number' && typeof value !== 'bigint') return;
    if (this.best === undefined || (this.strategy === 'min' ? value < this.best : value > this.best)) this.best = value;
  }

  result(): unknown {
    return this.best ?? this.first;
  }

  saved(): unknown {
    return this.best === undefined ? { first: this.first } : { first: this.first, best: this.best };
  }
}

/** generic::reduce */
export const reduce: OperatorType<ReduceConfig> = {
  name: 'generic::reduce',
  examples: [{}],
  outputPorts: () => ['overflow', 'err'],
  configSchema,
  validate: (config, nodeId) => void compile(config, nodeId),
  create: (config, ctx) => reduceNode(config, ctx),
};
