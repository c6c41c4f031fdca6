/** Shared fixtures of the tests of stateful nodes (core/state.ts): the store's JSON, a changelog. */
import { expect } from 'chai';
import { compactJson } from '../../src/codecs/json/compact';
import { parsePrecise } from '../../src/codecs/json/precise-parse';
import type { PartitionedState, StateChanges, StateValue } from '../../src/core/state';

/** A value as the store reads it back: eddy's JSON written and parsed. */
export function throughJson(value: StateValue): StateValue {
  return parsePrecise(compactJson(value));
}

/** A partition's entries as the store reads them back, in their order. */
export function entriesThroughJson(entries: ReadonlyMap<string, StateValue>): Map<string, StateValue> {
  return new Map([...entries].map(([key, value]) => [key, throughJson(value)]));
}

/** Every partition's snapshot, through JSON. */
export function snapshotAll(state: PartitionedState): Map<string, Map<string, StateValue>> {
  return new Map(state.partitions().map((p) => [p, entriesThroughJson(state.snapshot(p))]));
}

/**
 * A changelog per partition written from takeChanges, in order, as a
 * compacted topic read to its end gives it: a set moves the key to the end,
 * a removal deletes it.
 */
export class Changelog {
  readonly partitions = new Map<string, Map<string, StateValue>>();

  /** Takes the node's changes and appends them (through JSON). */
  take(state: PartitionedState): Map<string, StateChanges> {
    const all = state.takeChanges();
    for (const [partition, changes] of all) {
      let log = this.partitions.get(partition);
      if (log === undefined) this.partitions.set(partition, (log = new Map()));
      for (const [key, value] of changes) {
        log.delete(key);
        if (value !== undefined) log.set(key, throughJson(value));
      }
    }
    return all;
  }

  /** Checks that every partition's changelog holds the node's snapshot, entries and order. */
  expectMatches(state: PartitionedState, why: string): void {
    const names = new Set([...this.partitions.keys(), ...state.partitions()]);
    for (const name of names) {
      const log = [...(this.partitions.get(name) ?? new Map<string, StateValue>())];
      const snapshot = [...entriesThroughJson(state.snapshot(name))];
      expect(log, `${why}: partition ${JSON.stringify(name)}`).to.deep.equal(snapshot);
    }
  }
}
