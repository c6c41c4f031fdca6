/**
 * State that follows its source partitions (docs/stream-processing.md, docs/design-exactly-once.md).
 *
 * A stateful operator (window::aggregate, generic::dedupe, generic::reduce)
 * keeps its state per *partition*, like a Kafka Streams task: the source
 * partition its events came from (`event.partition`, `topic/partition` for
 * kafka), or the one partition `''` of an unpartitioned source. A partition
 * is the unit that moves: when a consumer group hands it to another member,
 * its state goes with it, written to a changelog and read back there.
 *
 * The state of one partition is a set of entries, key -> value, so a
 * changelog (a compacted Kafka topic, a file under `--data-dir`) can be
 * written incrementally: only what changed since the last commit, a removed
 * entry as a tombstone. Values are JSON-compatible (bigints allowed: the
 * store writes them with the json codec's exact integers) and never shared
 * with the live state: the node copies, or builds them fresh, so a snapshot
 * taken now is not changed by the events after it.
 */

/** A value of one state entry: JSON-compatible, bigints allowed. */
export type StateValue = unknown;

/** The entries of one partition's state that changed: a value, or `undefined` when the entry was removed (StateValue is unknown, so undefined is in it). */
export type StateChanges = Map<string, StateValue>;

/** The one partition of events from an unpartitioned source (file, tcp, an application). */
export const WHOLE = '';

/** The partition an event belongs to for a stateful operator. */
export function partitionOf(event: { partition?: string }): string {
  return event.partition ?? WHOLE;
}

/**
 * What a stateful node offers the runtime that saves and restores it
 * (`OperatorNode.state`). Every method runs between events, never inside
 * one. A restored partition continues exactly as the partition it was
 * snapshot from would have (the property tests check this per operator).
 */
export interface PartitionedState {
  /** the partitions that hold state now */
  partitions(): string[];
  /**
   * Every entry of one partition's state (empty when it holds none): what
   * `restore` takes back. Entries are in the order of their last change,
   * oldest first, the order a changelog replayed to its end gives them
   * (a node whose state has an order, such as an LRU's recency, writes an
   * entry again when its place in that order changes).
   */
  snapshot(partition: string): Map<string, StateValue>;
  /**
   * What changed since the last call, per partition (only partitions with
   * changes); the node forgets them. A changelog written from these, in
   * order, holds the same entries as `snapshot`. A node records changes
   * only once someone saves it (its first takeChanges or restore), so a
   * node nobody saves keeps no record per event: the first call gives
   * every entry of a partition not restored.
   */
  takeChanges(): Map<string, StateChanges>;
  /**
   * Replaces one partition's state with these entries (from a snapshot or a
   * changelog read to its end), before the partition's first event after a
   * restart or a takeover. Emits nothing; the entries count as saved (no
   * change to take). Throws, naming the entry, on an entry it cannot read.
   */
  restore(partition: string, entries: ReadonlyMap<string, StateValue>): void;
  /**
   * Event time: the watermark of each partition that has one (ms since the
   * epoch), for `/status` and `/metrics`. Absent for a node without event time.
   */
  watermarks?(): Record<string, number>;
  /**
   * The runtime saves this node's state in one transaction with its
   * sources' offsets (a kafka source with `guarantee: exactly_once`). From
   * now on an event is acked as soon as the state holds it, not once the
   * output it went into was delivered (that output is in the same
   * transaction, or in none); and a stop keeps what is open (the last
   * commit saved it, the next run goes on with it) instead of emitting it
   * partial or dropping it. Optional: a node that holds no events has
   * nothing to change.
   */
  savedWithSources?(): void;
  /**
   * The partition went to another member: its state is dropped without
   * emitting anything (its open windows are the new owner's to close).
   */
  release(partition: string): void;
  /**
   * Source `source` (an onramp's URL) stopped reading (`false`: its breaker
   * holds it, or it restores or commits) or reads again (`true`). A node
   * that measures silence (window::aggregate's `idle_timeout`) does not
   * count the time a source read nothing: its partitions were not silent,
   * nobody read them. Optional: a node that measures no time ignores it.
   */
  sourceReading?(source: string, reading: boolean): void;
}
