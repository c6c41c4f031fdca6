/**
 * The PartitionedState (core/state.ts) of a node whose state, per
 * partition, is a set of keyed entries in an Lru: generic::dedupe (a key ->
 * when it was first seen), generic::reduce (a group -> its open reduction).
 *
 * The Lru's order is the order of the entries' last change, which is the
 * order the contract asks of a snapshot: every change of an entry (a set,
 * a move in the dedupe's recency, a reduction's next event) makes it the
 * most recently used. So the entries changed since the runtime last took
 * changes are always the newest ones, and `takeChanges` finds them by
 * walking from the newest end while the key is in the dirty set: the hot
 * path only adds a key to a Set, and nothing is copied before the runtime
 * asks.
 */
import { Lru } from '../../../core/lru';
import type { PartitionedState, StateChanges, StateValue } from '../../../core/state';

/** One partition's entries, and the keys changed since the runtime last took its changes. */
export class LruPartition<V> {
  readonly lru: Lru<string, V>;
  /**
   * Keys whose entry was set, moved or removed since the last takeChanges.
   * Undefined until the runtime first restores the partition or takes its
   * changes: a node nobody saves (no state store) records nothing, so its
   * evicted or emitted keys do not pile up here; the first takeChanges
   * then gives every entry (the changelog of a partition never restored
   * here starts empty).
   */
  dirty: Set<string> | undefined;

  constructor(capacity: number) {
    this.lru = new Lru(capacity);
  }

  /** Adds a restored entry after the ones before it; one beyond the capacity evicts the oldest, a removal to write. */
  load(key: string, value: V): void {
    this.dirty ??= new Set();
    const evicted = this.lru.set(key, value);
    if (evicted !== undefined) this.dirty.add(evicted);
  }

  snapshot(encode: (value: V) => StateValue): Map<string, StateValue> {
    const entries = new Map<string, StateValue>();
    for (const [key, value] of this.lru.entries()) entries.set(key, encode(value));
    return entries;
  }

  takeChanges(encode: (value: V) => StateValue): StateChanges {
    const dirty = this.dirty;
    if (dirty === undefined) {
      this.dirty = new Set();
      return this.snapshot(encode);
    }
    const changes: StateChanges = new Map();
    if (dirty.size === 0) return changes;
    // the removals first: where a tombstone lands does not matter, only that it is the key's last word
    for (const key of dirty) if (!this.lru.has(key)) changes.set(key, undefined);
    // the changed entries still here are the newest ones (see above); written oldest first
    const changed: [string, V][] = [];
    for (const entry of this.lru.newestFirst()) {
      if (!dirty.has(entry[0])) break;
      changed.push(entry);
    }
    for (let i = changed.length - 1; i >= 0; i--) changes.set(changed[i][0], encode(changed[i][1]));
    dirty.clear();
    return changes;
  }
}

/**
 * The partitions of one node and the contract's methods over them; a
 * subclass says how a value is written and read back, and what else a
 * partition holds (a timer).
 */
export abstract class LruPartitionedState<V, P extends LruPartition<V>> implements PartitionedState {
  private readonly parts = new Map<string, P>();
  // the partition of the last event: a run of events of one partition costs no Map lookup
  private lastName: string | undefined;
  private lastPart: P | undefined;

  /** `who`: how errors name the node, `generic::dedupe node once` */
  constructor(protected readonly who: string) {}

  /** a fresh, empty partition of this name */
  protected abstract newPartition(name: string): P;
  /** the entry value of a live value: fresh, sharing nothing with it */
  protected abstract encode(value: V): StateValue;
  /** the live value of an entry; throws an Error saying why it cannot */
  protected abstract decode(key: string, value: StateValue): V;
  /** the partition is dropped (released or replaced by a restore): stop what it runs */
  protected dropped(_part: P): void {
    // nothing runs by default
  }
  /** the partition was restored: start what it runs */
  protected restored(_part: P): void {
    // nothing runs by default
  }

  /** The partition of this name, made empty on its first event. */
  protected partition(name: string): P {
    if (name === this.lastName && this.lastPart !== undefined) return this.lastPart;
    let part = this.parts.get(name);
    if (part === undefined) {
      part = this.newPartition(name);
      this.parts.set(name, part);
    }
    this.lastName = name;
    this.lastPart = part;
    return part;
  }

  /** Every partition, by name. */
  protected all(): IterableIterator<[string, P]> {
    return this.parts.entries();
  }

  partitions(): string[] {
    return [...this.parts].filter(([, part]) => part.lru.size > 0).map(([name]) => name);
  }

  snapshot(partition: string): Map<string, StateValue> {
    return this.parts.get(partition)?.snapshot((v) => this.encode(v)) ?? new Map<string, StateValue>();
  }

  takeChanges(): Map<string, StateChanges> {
    const all = new Map<string, StateChanges>();
    for (const [name, part] of this.parts) {
      const changes = part.takeChanges((v) => this.encode(v));
      if (changes.size > 0) all.set(name, changes);
    }
    return all;
  }

  restore(partition: string, entries: ReadonlyMap<string, StateValue>): void {
    // read every entry before touching the live partition: a bad one leaves it as it was
    const part = this.newPartition(partition);
    part.dirty = new Set();
    for (const [key, value] of entries) {
      let live: V;
      try {
        live = this.decode(key, value);
      } catch (err) {
        throw new Error(`${this.who}: cannot restore partition ${JSON.stringify(partition)}: entry ${JSON.stringify(key)}: ${(err as Error).message}`);
      }
      part.load(key, live);
    }
    this.release(partition);
    this.parts.set(partition, part);
    this.restored(part);
  }

  release(partition: string): void {
    const part = this.parts.get(partition);
    if (part === undefined) return;
    this.dropped(part);
    this.parts.delete(partition);
    if (this.lastPart === part) this.lastName = this.lastPart = undefined;
  }
}
