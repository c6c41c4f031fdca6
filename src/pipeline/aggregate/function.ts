/**
 * What an aggregate function is (`AggregateFunction`) and what it keeps per
 * group and window (`Accumulator`): the contract between window::aggregate
 * and the functions, apart from the catalog (functions.ts) that lists them.
 * An accumulator's snapshot holds its state only, never its constants (a
 * percentile's q, a collect's limit: the call gives them again), and
 * survives eddy's JSON exactly (snapshot.ts).
 */
/** One running aggregate of one group in one window. */
export interface Accumulator {
  /** adds one event's evaluated arguments (`values[i]` is argument i evaluated on the event; constant arguments are not passed again) */
  add(values: readonly unknown[]): void;
  /** the aggregate's value now (the window may keep adding after a partial read) */
  result(): unknown;
  /**
   * Folds in `other`, an accumulator of the same function whose events came
   * after this one's (first, last and collect keep arrival order): afterwards
   * this one's result is that of all the events of both, with this one's
   * constants (a percentile's q, a collect's limit). For windows built from
   * smaller windows; `other` is left as it was. Throws when `other` is of
   * another function.
   */
  merge(other: Accumulator): void;
  /**
   * Facts about the result for the output event's meta, or undefined when
   * there is nothing to say: collect's `{dropped: n}` once it dropped values
   * past its limit, distinct's `{estimated: true}` once it counts with HyperLogLog.
   */
  meta?(): Readonly<Record<string, unknown>> | undefined;
  /** this accumulator's state as a JSON-compatible value (bigints allowed), a fresh copy that later adds do not change */
  snapshot(): unknown;
  /** replaces this (fresh, same function and constants) accumulator's state with a snapshot's; throws a precise Error on a value it cannot read (which part, why) */
  restore(snapshot: unknown): void;
}

export interface AggregateFunction {
  readonly name: string;
  /** how many per-event arguments (evaluated on each event) the call takes, e.g. sum: 1, count: 0, count_if: 1, percentile: 1, collect: 1 */
  readonly eventArgs: number;
  /** names of constant arguments after the per-event ones, e.g. percentile: ['q'], collect: ['limit'] (optional ones marked in `optionalConstants`) */
  readonly constants: readonly string[];
  /** how many of the last `constants` may be left out (0 when absent) */
  readonly optionalConstants?: number;
  /** checks the constants at publish time (throws Error with a precise message: which argument, why) and builds accumulators */
  prepare(constants: readonly unknown[]): () => Accumulator;
  /** one line for the docs: what it returns, its error bound */
  readonly description: string;
  /**
   * Throws the error `add` would give for these values, without adding them.
   * The operator checks every call of an event before any accumulator takes
   * it, so an event refused by one function is counted by none (it goes to
   * `err` whole). Absent: the function takes any value.
   */
  check?: (values: readonly unknown[]) => void;
}
