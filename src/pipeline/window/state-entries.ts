/**
 * The state entries of window::aggregate (core/state.ts), written and
 * read. One entry per group of a fixed (tumbling, sliding) window, named
 * `f:<start>:<group key>`; one per session or count window, `g:<id>` (a
 * session's start and end move and sessions merge, so its name cannot be
 * its bounds); and `wm`, the partition's watermark (absent before its first
 * event). Short field names: a changelog holds one record per change.
 */
import type { StateValue } from '../../core/state';
import { packEntry, unpackEntry } from '../state-entry';
import type { Accumulator } from '../aggregate/function';
import type { AggregateCall } from './calls';
import type { WindowSpec } from './windows';

/** What an entry is made of and read back into: the aggregator's group (aggregator.ts), seen from here. */
export interface Group {
  readonly seq: number;
  readonly fields: Record<string, unknown>;
  readonly accumulators: Accumulator[];
  first?: { ingestNs: bigint; originUri: string };
}

/** A session or count window's bounds and count. */
interface Window {
  readonly start: number;
  readonly end: number;
  readonly count: number;
}

/** The parts of the aggregator's plan the entries depend on. */
interface AggregatorPlan {
  readonly window: WindowSpec;
  readonly calls: readonly AggregateCall[];
}

/** One group's entry. */
/** A group entry as read back from a store: checked before use (`f` may be JSON's null, `i` a number or text instead of a bigint). */
type SavedGroupEntry = Omit<GroupEntry, 'f' | 'i'> & { f: GroupEntry['f'] | null; i?: bigint | number | string };

export interface GroupEntry {
  /** creation order: a restored window emits its groups in the order they came */
  q: number;
  /** the group_by fields of the output */
  f: Record<string, unknown>;
  /** each aggregate call's accumulator, in the config's order */
  a: unknown[];
  /** the output's ingest time and origin (its first event's) */
  i?: bigint;
  o?: string;
  /** session and count windows: the group key, bounds and event count */
  k?: string;
  s?: number;
  e?: number;
  n?: number;
}

/** The accumulator methods that save and restore (aggregate/function.ts). */
type Saving = Accumulator & { snapshot(): unknown; restore(snapshot: unknown): void };

/**
 * A group's entry now: a fresh value, not shared with the live group, in
 * the form that survives the store's JSON (a Buffer or a small BigInt among
 * the group_by values or the accumulators' values: state-entry.ts).
 */
export function groupEntry(group: Group, key?: string, window?: Window): StateValue {
  return packEntry(groupFields(group, key, window) as unknown as Record<string, unknown>);
}

function groupFields(group: Group, key?: string, window?: Window): GroupEntry {
  const entry: GroupEntry = { q: group.seq, f: { ...group.fields }, a: group.accumulators.map((a) => (a as Saving).snapshot()) };
  if (group.first) {
    entry.i = group.first.ingestNs;
    entry.o = group.first.originUri;
  }
  if (window !== undefined) {
    entry.k = key;
    entry.s = window.start;
    entry.e = window.end;
    entry.n = window.count;
  }
  return entry;
}

/** A group read back: where it goes and how to fill it. */
export interface RestoredGroup {
  readonly entry: string;
  readonly seq: number;
  readonly key: string;
  readonly fields: Record<string, unknown>;
  /** a fixed window's start */
  readonly start: number;
  /** a session or count window's bounds and count */
  readonly window?: { start: number; end: number; count: number };
  restoreInto(group: Group): void;
}

/** Reads a partition's entries: its watermark and its groups in creation order. Throws naming the entry and why. */
export function readEntries(entries: ReadonlyMap<string, StateValue>, plan: AggregatorPlan, where: string): { watermark: number; groups: RestoredGroup[] } {
  let watermark = -Infinity;
  const groups: RestoredGroup[] = [];
  const perGroup = plan.window.kind === 'session' || plan.window.kind === 'count';
  for (const [name, value] of entries) {
    const fail = (why: string) => new Error(`${where}: state entry ${JSON.stringify(name)}: ${why}`);
    if (name === 'wm') {
      if (typeof value !== 'number' || Number.isNaN(value)) throw fail('the watermark must be a number');
      watermark = value;
      continue;
    }
    const kind = name.slice(0, 2);
    if ((kind === 'f:' && perGroup) || (kind === 'g:' && !perGroup) || (kind !== 'f:' && kind !== 'g:')) {
      throw fail(`not an entry of a ${plan.window.kind} window (the window changed since it was saved?)`);
    }
    let e: SavedGroupEntry;
    try {
      e = unpackEntry(value) as unknown as SavedGroupEntry;
    } catch (err) {
      throw fail((err as Error).message);
    }
    if (typeof e.q !== 'number' || e.f === null || typeof e.f !== 'object' || !Array.isArray(e.a)) {
      throw fail('not a group entry {q, f, a}');
    }
    if (e.a.length !== plan.calls.length) {
      throw fail(`${e.a.length} accumulators saved, the config has ${plan.calls.length} aggregate calls (the config changed since it was saved?)`);
    }
    let key: string;
    let start = 0;
    let window: RestoredGroup['window'];
    if (kind === 'f:') {
      const colon = name.indexOf(':', 2);
      start = Number(name.slice(2, colon));
      if (colon < 0 || !Number.isFinite(start)) throw fail('a fixed window entry is named f:<start>:<group key>');
      key = name.slice(colon + 1);
    } else {
      if (typeof e.k !== 'string' || typeof e.s !== 'number' || typeof e.e !== 'number' || typeof e.n !== 'number') {
        throw fail('a session or count window entry needs k, s, e and n');
      }
      if (!Number.isSafeInteger(Number(name.slice(2)))) throw fail('a session or count window entry is named g:<id>');
      key = e.k;
      window = { start: e.s, end: e.e, count: e.n };
    }
    groups.push({
      entry: name,
      seq: e.q,
      key,
      fields: e.f,
      start,
      window,
      restoreInto(group: Group): void {
        if (e.i !== undefined) group.first = { ingestNs: BigInt(e.i), originUri: String(e.o) };
        group.accumulators.forEach((accumulator, i) => {
          try {
            (accumulator as Saving).restore(e.a[i]);
          } catch (err) {
            throw fail(`aggregate.${plan.calls[i].field}: ${(err as Error).message}`);
          }
        });
      },
    });
  }
  groups.sort((a, b) => a.seq - b.seq);
  return { watermark, groups };
}
