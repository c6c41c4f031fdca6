/**
 * The state machine of window::aggregate: events in, aggregate events out
 * when windows close. No RxJS here: the operator (operators/window-aggregate.ts)
 * feeds it events and scheduler time, and passes on what it emits.
 */
import { present } from '../../core/errors';
import type { SchedulerLike, Subscription } from '../../core/rx';
import type { EddyEvent, EventId, Insight, PortEvent } from '../../core/event';
import type { StateChanges, StateValue } from '../../core/state';
import { groupEntry, readEntries } from './state-entries';
import type { Accumulator } from '../aggregate/functions';
import type { AggregateCall } from './calls';
import { EventScope, type EventExpression } from './expressions';
import { fixedWindowStarts, type WindowSpec } from './windows';
import { idMinter, withError } from '../operators/_shared/support';
import { toCel, type CelProgram } from '../cel/engine';

/** Everything compiled from the config. */
export interface AggregatorPlan {
  readonly nodeId: string;
  readonly uid: number;
  readonly window: WindowSpec;
  /** the event's time; scheduler time when absent */
  readonly time?: EventExpression;
  readonly lateness: number;
  /** event time: a partition without events this long stops holding its windows open (window/partitions.ts) */
  readonly idleTimeout: number;
  readonly groupBy: readonly (readonly [string, EventExpression])[];
  readonly calls: readonly AggregateCall[];
  readonly where?: EventExpression;
  readonly having?: CelProgram;
  /** output fields for the window's bounds (epoch ms), besides meta `window` */
  readonly windowFields?: { readonly start?: string; readonly end?: string };
  readonly maxGroups: number;
  readonly onShutdown: 'emit' | 'drop';
  /** the top-level fields every expression reads, when they read nothing else: read from an undecoded json frame (expressions.ts) */
  readonly frameKeys?: readonly string[];
}

/** A member event waiting for the windows it counted in to be delivered; one per event, shared by its windows. */
interface Member {
  /** the event without its data: what an insight needs to find its source (id, tracked, opMeta) */
  readonly event: EddyEvent;
  /** windows holding it whose output is not settled yet */
  open: number;
  settled: boolean;
}

export class Group {
  readonly accumulators: Accumulator[];
  /** the transactional member events (shared until the first one: most groups have none) */
  members: Member[] = NO_MEMBERS;
  /** the output's ingest time and origin: its first member's */
  first?: { ingestNs: bigint; originUri: string };

  constructor(
    readonly fields: Record<string, unknown>,
    calls: readonly AggregateCall[],
    /** creation order in the aggregator: a restored window emits its groups in the order they had */
    readonly seq: number,
    /** its state entry in a fixed window (`f:start:key`); a per-group window's entry is the window's */
    readonly entry: string,
  ) {
    this.accumulators = calls.map((c) => c.accumulator());
  }
}

export class Window {
  readonly groups = new Map<string, Group>();
  timer?: Subscription;
  /** events in a count window */
  count = 0;

  /** a session or count window's state entry (`g:id`), named when its state is first saved (Aggregator.entryOf) */
  entry?: string;

  constructor(
    public start: number,
    public end: number,
    /** a session or count window (one group); a fixed window keeps one entry per group */
    readonly perGroup = false,
  ) {}
}

export type Emit = (out: PortEvent) => void;

const NO_VALUES: readonly unknown[] = [];
/** never pushed to: a group's members array until its first transactional event */
const NO_MEMBERS: Member[] = [];

export class Aggregator {
  /** tumbling and hopping windows by start */
  private readonly fixed = new Map<number, Window>();
  /** session and count windows by group key (a session window holds one group) */
  private readonly perGroup = new Map<string, Window[]>();
  /** session and count windows by their state entry, with their group key */
  private readonly perGroupByEntry = new Map<string, { key: string; window: Window }>();
  /** groups and per-group windows made so far: creation order and entry names */
  private groupSeq = 0;
  private windowSeq = 0;
  /**
   * State entries changed since the last takeChanges: recorded only once
   * someone saves the state (the first snapshot, takeChanges or restore),
   * so a pipeline that saves nothing pays nothing per event.
   */
  private tracking = false;
  /** saved with its sources' offsets (PartitionedState.savedWithSources): an event is acked once held, a stop keeps what is open */
  savedWithSources = false;
  private readonly dirty = new Set<string>();
  private savedWatermark = -Infinity;
  /** outputs whose delivery settles their members, by the seq of their id */
  private readonly pending = new Map<number, Member[]>();
  private watermark = -Infinity;
  /** session and count windows open, over every group */
  private perGroupOpen = 0;
  private readonly mint: () => { uid: number; seq: number };
  private readonly from: string;
  /**
   * The aggregate arguments, each distinct source once (sum, min, max and
   * mean of `event.aint` read it once per event, not four times): CEL is pure,
   * so one value serves every call that names the same expression.
   */
  private readonly argExprs: EventExpression[] = [];
  /** per call, per argument: its slot in `argExprs` */
  private readonly argSlots: number[][];
  /** per call, per argument: whether it is its slot's first use (evaluated there; later uses read the value) */
  private readonly argFirst: boolean[][];
  /**
   * Lists reused by every event, filled anew by each push: no function keeps
   * or changes its argument list, and nothing keeps them past the push (a
   * new group copies its values into its fields).
   */
  private readonly scratch: { groupValues: unknown[]; values: unknown[][]; evaluated: unknown[]; args: unknown[][] };

  constructor(
    private readonly plan: AggregatorPlan,
    private readonly scheduler: SchedulerLike,
    private readonly emit: Emit,
    /** raises an insight towards the sources (an ack or fail of a member) */
    private readonly raise: (insight: Insight) => void,
    from: string,
    /** the source partition whose events this aggregator takes ('' : unpartitioned); its outputs carry it */
    private readonly partition = '',
    /** output ids: shared by the aggregators of one node (one per partition), so ids stay unique */
    mint?: () => EventId,
  ) {
    this.mint = mint ?? idMinter(plan.uid);
    this.from = from;
    const slotBySource = new Map<string, number>();
    this.argSlots = plan.calls.map((call) => call.args.map((arg) => slotOf(slotBySource, this.argExprs, arg)));
    const seen = new Set<number>();
    this.argFirst = this.argSlots.map((slots) =>
      slots.map((slot) => {
        if (seen.has(slot)) return false;
        seen.add(slot);
        return true;
      }),
    );
    this.scratch = {
      groupValues: new Array<unknown>(plan.groupBy.length).fill(null),
      values: plan.calls.map(() => NO_VALUES as unknown[]),
      evaluated: new Array<unknown>(this.argExprs.length).fill(null),
      args: plan.calls.map((call) => new Array<unknown>(call.args.length).fill(null)),
    };
  }

  /** One event in. */
  push(event: EddyEvent): void {
    const scope = new EventScope(event, this.plan.frameKeys);
    const { groupBy, calls } = this.plan;
    // which expression is being evaluated, for the error: the message is built only when one fails
    let stage: 'where' | 'time' | 'group_by' | 'aggregate' = 'where';
    let at = 0;
    let t: number;
    let groupValues: readonly unknown[];
    let values: (readonly unknown[])[];
    try {
      if (this.plan.where) {
        const keep = this.plan.where.evaluate(scope);
        if (typeof keep !== 'boolean') throw new Error(`must be a bool, got ${typeof keep}`);
        if (!keep) {
          // consumed, not counted: its source need not wait for a window
          if (event.transactional) this.raise({ kind: 'ack', event, from: this.from });
          return;
        }
      }
      stage = 'time';
      t = this.plan.time ? timeMs(this.plan.time.evaluate(scope)) : this.scheduler.now();
      stage = 'group_by';
      const { scratch } = this;
      const gv = scratch.groupValues;
      for (at = 0; at < groupBy.length; at++) gv[at] = groupBy[at][1].evaluate(scope);
      groupValues = gv;
      stage = 'aggregate';
      values = scratch.values;
      // each distinct argument's value, evaluated at its first use, in call order, so an error names the same call as before
      const evaluated = scratch.evaluated;
      for (at = 0; at < calls.length; at++) {
        const call = calls[at];
        // count() and the like: one shared empty list (no function keeps or changes its argument list)
        if (call.args.length === 0) {
          call.check(NO_VALUES);
          values[at] = NO_VALUES;
          continue;
        }
        const slots = this.argSlots[at];
        const first = this.argFirst[at];
        const args = scratch.args[at];
        for (let i = 0; i < args.length; i++) {
          const slot = slots[i];
          if (first[i]) args[i] = evaluated[slot] = this.argExprs[slot].evaluate(scope);
          else {
            // a list or map is evaluated again: each call gets its own copy, as it did when every call evaluated its arguments
            const v = evaluated[slot];
            args[i] = typeof v === 'object' && v !== null ? this.argExprs[slot].evaluate(scope) : v;
          }
        }
        call.check(args);
        values[at] = args;
      }
    } catch (err) {
      const field = stage === 'group_by' ? `group_by.${groupBy[at][0]}` : stage === 'aggregate' ? `aggregate.${calls[at].field}` : stage;
      this.emit({ port: 'err', event: withError(event, `window::aggregate node ${this.plan.nodeId}: ${field}: ${(err as Error).message}`) });
      return;
    }
    const key = groupKey(groupValues);
    const windows = this.windowsFor(t, key);
    if (windows === 'late' || windows === 'overflow') {
      this.emit({ port: windows, event });
      return;
    }
    const member: Member | undefined =
      event.transactional && !this.savedWithSources
        ? { event: withoutData(event), open: windows instanceof Window ? 1 : windows.length, settled: false }
        : undefined;
    try {
      // a tumbling window (the common case): the one window, without arrays
      if (windows instanceof Window) this.add(windows, windows.groups.get(key), key, groupValues, values, event, member);
      else {
        // each window's group is looked up once, before any window takes the event
        const groups = windows.map((w) => w.groups.get(key));
        for (let wi = 0; wi < windows.length; wi++) this.add(windows[wi], groups[wi], key, groupValues, values, event, member);
      }
    } catch (err) {
      // a value the function refuses (sum of a string): the accumulators it reached took it already, so say which
      this.emit({ port: 'err', event: withError(event, `window::aggregate node ${this.plan.nodeId}: aggregate: ${(err as Error).message}`) });
      // the err event carries it from here: the windows that took it must not settle it too
      if (member) member.settled = true;
      return;
    }
    // held by its windows, whose state is saved with the source's offsets: done
    if (event.transactional && this.savedWithSources) this.raise({ kind: 'ack', event, from: this.from });
    if (this.plan.time) this.advance(t);
  }

  /** The event into one of its windows' `group` (made when undefined). */
  private add(
    w: Window,
    group: Group | undefined,
    key: string,
    groupValues: readonly unknown[],
    values: (readonly unknown[])[],
    event: EddyEvent,
    member: Member | undefined,
  ): void {
    if (!group) {
      group = new Group(groupFields(this.plan.groupBy, groupValues), this.plan.calls, ++this.groupSeq, w.perGroup ? '' : `f:${w.start}:${key}`);
      w.groups.set(key, group);
    }
    if (this.tracking) this.dirty.add(w.perGroup ? this.entryOf(w) : group.entry);
    group.first ??= { ingestNs: event.ingestNs, originUri: event.originUri };
    for (let i = 0; i < values.length; i++) group.accumulators[i].add(values[i]);
    if (member) {
      if (group.members === NO_MEMBERS) group.members = [];
      group.members.push(member);
    }
    w.count++;
    if (this.plan.window.kind === 'count' && w.count >= this.plan.window.count) this.closeCount(key, w);
  }

  /** The source completed: emit every open window, marked partial, or drop them (failing their members back). */
  flush(): void {
    // saved with the sources' offsets: the open windows stay in the saved state, for the next run to go on with
    if (this.savedWithSources) return this.dispose();
    const open = [...this.fixed.values(), ...[...this.perGroup.values()].flat()].sort((a, b) => a.end - b.end);
    if (this.tracking) for (const w of open) this.markWindow(w);
    this.fixed.clear();
    this.perGroup.clear();
    this.perGroupByEntry.clear();
    this.perGroupOpen = 0;
    for (const w of open) {
      w.timer?.unsubscribe();
      if (this.plan.onShutdown === 'emit') this.close(w, true);
      else for (const g of w.groups.values()) this.settle(g.members, 'fail', 'window dropped at shutdown (on_shutdown: drop)');
    }
  }

  /** Cancels the timers (unsubscribe). */
  dispose(): void {
    for (const w of [...this.fixed.values(), ...[...this.perGroup.values()].flat()]) w.timer?.unsubscribe();
  }

  /** An insight on its way back: the ack or fail of one of our outputs settles its members here. */
  onInsight(insight: Insight): Insight | null {
    if (insight.kind !== 'ack' && insight.kind !== 'fail') return insight;
    const seq = insight.event?.opMeta?.[this.plan.uid];
    if (typeof seq !== 'number') return insight;
    const members = this.pending.get(seq);
    if (!members) return null;
    this.pending.delete(seq);
    this.settle(members, insight.kind, typeof insight.meta?.error === 'string' ? insight.meta.error : undefined);
    return null;
  }

  // ---- state (core/state.ts): one entry per group of a fixed window, one per session or count window, and `wm` ----

  /** Every entry of this aggregator's state, in creation order (the watermark first). */
  snapshot(): Map<string, StateValue> {
    const entries = new Map<string, StateValue>();
    if (this.watermark > -Infinity) entries.set('wm', this.watermark);
    const all: [string, Group, StateValue][] = [];
    for (const w of this.fixed.values()) for (const group of w.groups.values()) all.push([group.entry, group, groupEntry(group)]);
    for (const [key, windows] of this.perGroup) {
      for (const window of windows) {
        const group = window.groups.get(key);
        if (group) all.push([this.entryOf(window), group, groupEntry(group, key, window)]);
      }
    }
    all.sort((a, b) => a[1].seq - b[1].seq);
    for (const [entry, , value] of all) entries.set(entry, value);
    return entries;
  }

  /** The entries changed since the last call: a value, or undefined for a window closed since. */
  takeChanges(): StateChanges {
    // the first save: everything there is (nothing was recorded before it)
    if (!this.tracking) {
      this.startTracking();
      const all = this.snapshot();
      this.dirty.clear();
      this.savedWatermark = this.watermark;
      return all;
    }
    const changes: StateChanges = new Map();
    if (this.watermark !== this.savedWatermark) {
      changes.set('wm', this.watermark);
      this.savedWatermark = this.watermark;
    }
    for (const entry of this.dirty) changes.set(entry, this.entryValue(entry));
    this.dirty.clear();
    return changes;
  }

  /**
   * Takes back a snapshot's entries into this aggregator, which has taken no
   * event yet: windows, groups and watermark as they were, processing-time
   * timers set for the time left. Restored groups have no members: their
   * events were made durable by the save that wrote these entries.
   */
  restore(entries: ReadonlyMap<string, StateValue>): void {
    const where = `window::aggregate node ${this.plan.nodeId}`;
    const { watermark, groups } = readEntries(entries, this.plan, where);
    this.tracking = true;
    this.watermark = this.savedWatermark = watermark;
    for (const g of groups) {
      let w: Window;
      if (g.window === undefined) {
        const spec = this.plan.window as { size: number };
        w = this.fixedWindow(g.start, g.start + spec.size);
      } else {
        w = this.openPerGroup(g.key, g.window.start, g.window.end, g.entry);
        w.count = g.window.count;
        if (!this.plan.time && this.plan.window.kind === 'session') {
          const session = w;
          session.timer = this.scheduler.schedule(() => this.sessionTimer(g.key, session), Math.max(0, w.end - this.scheduler.now()));
        }
        const id = Number(g.entry.slice(2));
        if (id > this.windowSeq) this.windowSeq = id;
      }
      const group = new Group(g.fields, this.plan.calls, g.seq, w.perGroup ? '' : g.entry);
      g.restoreInto(group);
      w.groups.set(g.key, group);
      if (g.seq > this.groupSeq) this.groupSeq = g.seq;
    }
  }

  /** The value of one entry now: undefined when its group or window is gone. */
  private entryValue(entry: string): StateValue {
    if (entry.startsWith('g:')) {
      const found = this.perGroupByEntry.get(entry);
      const group = found?.window.groups.get(found.key);
      return found && group && groupEntry(group, found.key, found.window);
    }
    // f:start:key
    const colon = entry.indexOf(':', 2);
    const group = this.fixed.get(Number(entry.slice(2, colon)))?.groups.get(entry.slice(colon + 1));
    return group && groupEntry(group);
  }

  /** A session or count window's entry name, given when first asked (only saving asks). */
  private entryOf(w: Window): string {
    return (w.entry ??= `g:${++this.windowSeq}`);
  }

  /** The state is saved from now on: changes are recorded, and the per-group windows found by entry. */
  private startTracking(): void {
    if (this.tracking) return;
    this.tracking = true;
    for (const [key, windows] of this.perGroup) for (const window of windows) this.perGroupByEntry.set(this.entryOf(window), { key, window });
  }

  /** A window closed or dropped: its entries change (to gone). */
  private markWindow(w: Window): void {
    if (w.perGroup) this.dirty.add(this.entryOf(w));
    else for (const group of w.groups.values()) this.dirty.add(group.entry);
  }

  /** How many groups wait in open windows (diagnostics and tests). */
  openGroups(): number {
    let n = 0;
    for (const w of this.fixed.values()) n += w.groups.size;
    for (const ws of this.perGroup.values()) n += ws.length;
    return n;
  }

  /**
   * The windows `t` joins (created as needed; a tumbling window's alone, not in an array); 'late' when every one of them
   * has closed; 'overflow' when it would add a group past `max_groups` (to
   * any of its windows, so that no window counts it partly; for session and
   * count windows, which hold one group each, past `max_groups` open ones).
   */
  private windowsFor(t: number, key: string): Window | Window[] | 'late' | 'overflow' {
    const spec = this.plan.window;
    switch (spec.kind) {
      case 'tumbling': {
        // one window, [k·size, (k+1)·size): what fixedWindowStarts gives, without its arrays
        const start = Math.floor(t / spec.size) * spec.size;
        if (start + spec.size <= this.watermark) return 'late';
        const open = this.fixed.get(start);
        // an open window is returned as found, not looked up again
        if (open === undefined) return this.fixedWindow(start, start + spec.size);
        if (open.groups.size >= this.plan.maxGroups && !open.groups.has(key)) return 'overflow';
        return open;
      }
      case 'hopping': {
        const starts = fixedWindowStarts(spec, t).filter((start) => start + spec.size > this.watermark);
        if (starts.length === 0) return 'late';
        const full = starts.some((start) => {
          const groups = this.fixed.get(start)?.groups;
          return groups !== undefined && !groups.has(key) && groups.size >= this.plan.maxGroups;
        });
        return full ? 'overflow' : starts.map((start) => this.fixedWindow(start, start + spec.size));
      }
      case 'session':
        return this.sessionFor(t, key, spec.gap);
      case 'count': {
        const open = this.perGroup.get(key)?.[0];
        if (open) {
          open.end = Math.max(open.end, t);
          return [open];
        }
        if (this.perGroupOpen >= this.plan.maxGroups) return 'overflow';
        return [this.openPerGroup(key, t, t)];
      }
    }
  }

  private fixedWindow(start: number, end: number): Window {
    let w = this.fixed.get(start);
    if (w) return w;
    w = new Window(start, end);
    this.fixed.set(start, w);
    if (!this.plan.time) {
      const window = w;
      window.timer = this.scheduler.schedule(() => this.closeFixed(window), Math.max(0, end - this.scheduler.now()));
    }
    return w;
  }

  private sessionFor(t: number, key: string, gap: number): Window[] | 'late' | 'overflow' {
    const sessions = this.perGroup.get(key) ?? [];
    // t's own session would be [t, t + gap), half-open: it joins every open session it overlaps (one that only
    // touches it, ending at t or starting at t + gap, stays apart, whichever event came first)
    const overlaps = (s: Window) => t > s.start - gap && t < s.end;
    const joined = sessions.find(overlaps);
    if (joined) {
      // out of order in event time, t can fill the gap between sessions: they become one (the oldest, by creation);
      // looked for only when the group has another open session, so the usual event allocates nothing here
      if (sessions.length > 1) for (const other of sessions.filter((s) => s !== joined && overlaps(s))) this.mergeSession(key, joined, other);
      joined.start = Math.min(joined.start, t);
      joined.end = Math.max(joined.end, t + gap);
      if (this.tracking) this.dirty.add(this.entryOf(joined));
      return [joined];
    }
    if (t + gap <= this.watermark) return 'late';
    if (this.perGroupOpen >= this.plan.maxGroups) return 'overflow';
    const session = this.openPerGroup(key, t, t + gap);
    if (!this.plan.time) session.timer = this.scheduler.schedule(() => this.sessionTimer(key, session), gap);
    return [session];
  }

  /**
   * Folds session `other` of group `key` into `into`, created before it, and
   * closes `other` without output. Accumulators merge in creation order, so
   * first() stays the first to arrive; collect() lists `into`'s values, then
   * `other`'s. Members keep their one window (a session is the only one
   * holding them), now `into`.
   */
  private mergeSession(key: string, into: Window, other: Window): void {
    other.timer?.unsubscribe();
    this.removePerGroup(key, other);
    if (this.tracking) this.dirty.add(this.entryOf(into));
    into.start = Math.min(into.start, other.start);
    into.end = Math.max(into.end, other.end);
    into.count += other.count;
    const from = other.groups.get(key);
    if (!from) return;
    const group = into.groups.get(key);
    if (!group) {
      into.groups.set(key, from);
      return;
    }
    for (let i = 0; i < group.accumulators.length; i++) group.accumulators[i].merge(from.accumulators[i]);
    if (from.members !== NO_MEMBERS) group.members = group.members === NO_MEMBERS ? from.members : group.members.concat(from.members);
  }

  private openPerGroup(key: string, start: number, end: number, entry?: string): Window {
    const w = new Window(start, end, true);
    w.entry = entry;
    const list = this.perGroup.get(key);
    if (list) list.push(w);
    else this.perGroup.set(key, [w]);
    // kept only while the state is saved: a count window per few events would otherwise cost a Map entry each
    if (this.tracking) this.perGroupByEntry.set(this.entryOf(w), { key, window: w });
    this.perGroupOpen++;
    return w;
  }

  private removePerGroup(key: string, w: Window): void {
    const list = this.perGroup.get(key);
    if (!list) return;
    const i = list.indexOf(w);
    if (i < 0) return;
    list.splice(i, 1);
    this.perGroupOpen--;
    if (list.length === 0) this.perGroup.delete(key);
    if (this.tracking) {
      this.perGroupByEntry.delete(this.entryOf(w));
      this.dirty.add(this.entryOf(w));
    }
  }

  /** A processing-time session's timer: closes it unless an event stretched it meanwhile. */
  private sessionTimer(key: string, session: Window): void {
    const now = this.scheduler.now();
    if (session.end > now) {
      session.timer = this.scheduler.schedule(() => this.sessionTimer(key, session), session.end - now);
      return;
    }
    this.removePerGroup(key, session);
    this.close(session, false);
  }

  private closeFixed(w: Window): void {
    if (this.fixed.get(w.start) !== w) return;
    this.fixed.delete(w.start);
    this.close(w, false);
  }

  private closeCount(key: string, w: Window): void {
    this.removePerGroup(key, w);
    this.close(w, false);
  }

  /** Event time moved to `t`: the watermark follows, less the allowed lateness. */
  private advance(t: number): void {
    this.advanceTo(t - this.plan.lateness);
  }

  /** The watermark: windows ending at or before it have closed; -Infinity before the first event (event time only). */
  get currentWatermark(): number {
    return this.watermark;
  }

  /**
   * The watermark moves to `watermark` (when it is ahead): every window
   * whose end it passed closes, oldest end first. Events move it; so does
   * the node for a partition that went idle (window-aggregate.ts).
   */
  advanceTo(watermark: number): void {
    if (watermark <= this.watermark) return;
    this.watermark = watermark;
    const due: (() => void)[] = [];
    const ends: number[] = [];
    for (const w of this.fixed.values()) {
      if (w.end <= watermark) {
        due.push(() => this.closeFixed(w));
        ends.push(w.end);
      }
    }
    if (this.plan.window.kind === 'session') {
      for (const [key, sessions] of this.perGroup) {
        for (const s of sessions) {
          if (s.end <= watermark) {
            due.push(() => {
              this.removePerGroup(key, s);
              this.close(s, false);
            });
            ends.push(s.end);
          }
        }
      }
    }
    const order = ends.map((_, i) => i).sort((a, b) => ends[a] - ends[b]);
    for (const i of order) due[i]();
  }

  /** Emits one event per group of a closed window (those `having` keeps); settles the members of those it does not. */
  private close(w: Window, partial: boolean): void {
    w.timer?.unsubscribe();
    if (this.tracking) this.markWindow(w);
    const calls = this.plan.calls;
    for (const group of w.groups.values()) {
      // Object.assign, not a spread: V8 copies these dynamically built objects ~10x faster this way (measured)
      const data: Record<string, unknown> = Object.assign({}, group.fields);
      // the bounds first, so `having` can read them too
      const bounds = this.plan.windowFields;
      if (bounds?.start !== undefined) data[bounds.start] = w.start;
      if (bounds?.end !== undefined) data[bounds.end] = w.end;
      // what a function says about its result (collect: {dropped}, distinct: {estimated}), by output field
      let facts: Record<string, unknown> | undefined;
      // the call being read, for the error (its name is built only when one fails)
      let at = -1;
      try {
        for (at = 0; at < calls.length; at++) {
          const accumulator = group.accumulators[at];
          data[calls[at].field] = accumulator.result();
          if (accumulator.meta) {
            const fact = accumulator.meta();
            if (fact) (facts ??= {})[calls[at].field] = fact;
          }
        }
        if (this.plan.having) {
          at = -1;
          const keep = this.plan.having.evaluateWith(havingVars(data));
          if (typeof keep !== 'boolean') throw new Error(`must be a bool, got ${typeof keep}`);
          if (!keep) {
            this.settle(group.members, 'ack');
            continue;
          }
        }
      } catch (err) {
        const field = at < 0 ? 'having' : `aggregate.${calls[at].field}`;
        const error = `window::aggregate node ${this.plan.nodeId}: ${field}: ${(err as Error).message}`;
        this.emit({ port: 'err', event: this.output(w, group, Object.assign({}, group.fields), partial, error) });
        continue;
      }
      const event = this.output(w, group, data, partial);
      if (facts) event.meta.aggregate = facts;
      this.emit({ port: 'out', event });
    }
  }

  private output(w: Window, group: Group, data: Record<string, unknown>, partial: boolean, error?: string): EddyEvent {
    const id = this.mint();
    // a group is made by its first event, which sets this
    const first = present(group.first, 'the first event of a group');
    const transactional = group.members.length > 0;
    if (transactional) this.pending.set(id.seq, group.members);
    const event: EddyEvent = {
      id,
      data,
      meta: outputMeta(w, partial, error),
      ingestNs: first.ingestNs,
      originUri: first.originUri,
      isBatch: false,
      transactional,
      opMeta: { [this.plan.uid]: id.seq },
    };
    // set, not spread into the literal: the output keeps the one shape every event has (a spread made it slower to copy)
    if (this.partition !== '') event.partition = this.partition;
    return event;
  }

  /** One window's output was delivered (or not): a member is acked once every window holding it was, failed at its first fail. */
  private settle(members: readonly Member[], kind: 'ack' | 'fail', error?: string): void {
    for (const m of members) {
      if (m.settled) continue;
      m.open--;
      if (kind === 'ack' && m.open > 0) continue;
      m.settled = true;
      this.raise({ kind, event: m.event, from: this.from, ...(error ? { meta: { error } } : {}) });
    }
  }
}

/** A new group's output fields: each group_by name with its value (built once per group, not per event). */
function groupFields(groupBy: AggregatorPlan['groupBy'], values: readonly unknown[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (let i = 0; i < groupBy.length; i++) fields[groupBy[i][0]] = values[i];
  return fields;
}

/** An output's meta: the window's bounds, `partial` at a stop, `error` on the err port. */
function outputMeta(w: Window, partial: boolean, error: string | undefined): Record<string, unknown> {
  const meta: Record<string, unknown> = { window: { start: w.start, end: w.end } };
  if (partial) meta.partial = true;
  if (error) meta.error = error;
  return meta;
}

/** The event time in epoch ms: a number or bigint of ms, or a timestamp (CEL timestamps arrive as RFC 3339 strings). */
function timeMs(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return ms;
    throw new Error(`not a timestamp: ${JSON.stringify(value)}`);
  }
  throw new Error(`must be epoch milliseconds or a timestamp, got ${value === null ? 'null' : typeof value}`);
}

/** The slot of `arg` in `exprs`, by its source: a new slot for a source not seen before. */
function slotOf(slotBySource: Map<string, number>, exprs: EventExpression[], arg: EventExpression): number {
  let slot = slotBySource.get(arg.source);
  if (slot === undefined) {
    slot = exprs.push(arg) - 1;
    slotBySource.set(arg.source, slot);
  }
  return slot;
}

/** The group's key: its group_by values, in order; bigints kept apart from strings (generic::reduce groups by it too). */
export function groupKey(values: readonly unknown[]): string {
  if (values.length === 0) return '';
  // The common case, one string (group by event.app): the string itself, without a JSON.stringify or a
  // concatenation per event (a new string hashed again by every Map lookup). Every other key starts with
  // \u0001, a character no JSON text starts with, so it is apart from every such string; a string that
  // itself starts with \u0001 takes the other way.
  if (values.length === 1 && typeof values[0] === 'string' && values[0].charCodeAt(0) !== 1) return values[0];
  return `\u0001${JSON.stringify(values, (_k, v: unknown) => (typeof v === 'bigint' ? `\u0000n${v}` : v))}`;
}

/** What `having` sees: each output field by name, and the output as `event`. */
function havingVars(data: Record<string, unknown>): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) vars[k] = toCel(v);
  vars.event = vars.event ?? toCel(data);
  return vars;
}

/** The event without its data, for a member's insights: a lazy event's own fields are copied without reading (so without decoding) its data. */
function withoutData(event: EddyEvent): EddyEvent {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(event)) if (key !== 'data') copy[key] = (event as unknown as Record<string, unknown>)[key];
  for (const key of ['id', 'meta', 'ingestNs', 'originUri', 'isBatch', 'transactional'] as const) if (!(key in copy)) copy[key] = event[key];
  copy.data = null;
  return copy as unknown as EddyEvent;
}
