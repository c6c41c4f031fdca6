import { AGGREGATE_FUNCTIONS, type Accumulator } from '../../../src/pipeline/aggregate/functions';

/** A fresh accumulator of `name` with `constants`. */
export function accumulator(name: string, constants: readonly unknown[] = []): Accumulator {
  const fn = AGGREGATE_FUNCTIONS.get(name);
  if (!fn) throw new Error(`no aggregate function ${name}`);
  return fn.prepare(constants)();
}

/** The accumulator after adding `values` (one per-event argument each) in order. */
export function fed(name: string, values: readonly unknown[], constants: readonly unknown[] = []): Accumulator {
  const acc = accumulator(name, constants);
  for (const v of values) acc.add([v]);
  return acc;
}

/** The result of `name` over `values`. */
export function aggregate(name: string, values: readonly unknown[], constants: readonly unknown[] = []): unknown {
  return fed(name, values, constants).result();
}

/** The result of feeding `values` split at `at` into two accumulators, the second merged into the first. */
export function merged(name: string, values: readonly unknown[], at: number, constants: readonly unknown[] = []): Accumulator {
  const cut = Math.min(at, values.length);
  const a = fed(name, values.slice(0, cut), constants);
  a.merge(fed(name, values.slice(cut), constants));
  return a;
}

/** The message of what `f` throws. */
export function thrown(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error, nothing was thrown');
}

/** A bigint as a number when exact, as the functions return integers. */
export const exact = (n: bigint): number | bigint => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n);
