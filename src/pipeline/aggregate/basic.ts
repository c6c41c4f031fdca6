/** Counting and picking: count, count_if, first, last. */
import type { Accumulator, AggregateFunction } from './function';
import { SnapshotReader, writeHeld } from './snapshot';
import { checkConstantCount, mergeable, typeName } from './values';

class Count implements Accumulator {
  n = 0;
  add(): void {
    this.n++;
  }
  result(): number {
    return this.n;
  }
  merge(other: Accumulator): void {
    this.n += mergeable('count', Count, other).n;
  }
  /** the count */
  snapshot(): number {
    return this.n;
  }
  restore(snapshot: unknown): void {
    this.n = new SnapshotReader('count').count('the snapshot', snapshot);
  }
}

export const count: AggregateFunction = {
  name: 'count',
  eventArgs: 0,
  constants: [],
  description: 'how many events; 0 when empty; exact',
  prepare(constants) {
    checkConstantCount('count', 0, [], 0, constants);
    return () => new Count();
  },
};

class CountIf implements Accumulator {
  n = 0;
  add(values: readonly unknown[]): void {
    const cond = values[0];
    if (cond === true) this.n++;
    else if (cond !== false) throw new Error(`count_if: expected a bool, got ${typeName(cond)}`);
  }
  result(): number {
    return this.n;
  }
  merge(other: Accumulator): void {
    this.n += mergeable('count_if', CountIf, other).n;
  }
  /** the count */
  snapshot(): number {
    return this.n;
  }
  restore(snapshot: unknown): void {
    this.n = new SnapshotReader('count_if').count('the snapshot', snapshot);
  }
}

export const countIf: AggregateFunction = {
  name: 'count_if',
  eventArgs: 1,
  constants: [],
  description: 'how many events the condition (a bool) is true for; 0 when empty; exact; a non-bool condition is an error',
  check(values) {
    if (typeof values[0] !== 'boolean') throw new Error(`count_if: expected a bool, got ${typeName(values[0])}`);
  },
  prepare(constants) {
    checkConstantCount('count_if', 1, [], 0, constants);
    return () => new CountIf();
  },
};

/**
 * The state of first and last: `[]` before the first event, else `[value]`,
 * or `[value, patches]` when JSON would not give the value back as it was
 * (snapshot.ts, `writeHeld`: a patch's path starts with 0, the value's place).
 */
function snapshotPick(seen: boolean, value: unknown): unknown[] {
  if (!seen) return [];
  const { json, patches } = writeHeld([value]);
  return patches.length === 0 ? json : [json[0], patches];
}

function restorePick(fn: string, snapshot: unknown): [seen: boolean, value: unknown] {
  const reader = new SnapshotReader(fn);
  const parts = reader.list('the snapshot', snapshot, [0, 1, 2]);
  if (parts.length === 0) return [false, null];
  return [true, reader.held('the value', [parts[0]], parts[1])[0]];
}

class First implements Accumulator {
  seen = false;
  value: unknown = null;
  add(values: readonly unknown[]): void {
    if (this.seen) return;
    this.seen = true;
    this.value = values[0];
  }
  result(): unknown {
    return this.value;
  }
  merge(other: Accumulator): void {
    const o = mergeable('first', First, other);
    if (!this.seen && o.seen) {
      this.seen = true;
      this.value = o.value;
    }
  }
  snapshot(): unknown[] {
    return snapshotPick(this.seen, this.value);
  }
  restore(snapshot: unknown): void {
    [this.seen, this.value] = restorePick('first', snapshot);
  }
}

export const first: AggregateFunction = {
  name: 'first',
  eventArgs: 1,
  constants: [],
  description: 'the value of the first event to arrive, as it is (any type); null when empty',
  prepare(constants) {
    checkConstantCount('first', 1, [], 0, constants);
    return () => new First();
  },
};

class Last implements Accumulator {
  seen = false;
  value: unknown = null;
  add(values: readonly unknown[]): void {
    this.seen = true;
    this.value = values[0];
  }
  result(): unknown {
    return this.value;
  }
  merge(other: Accumulator): void {
    const o = mergeable('last', Last, other);
    if (o.seen) {
      this.seen = true;
      this.value = o.value;
    }
  }
  snapshot(): unknown[] {
    return snapshotPick(this.seen, this.value);
  }
  restore(snapshot: unknown): void {
    [this.seen, this.value] = restorePick('last', snapshot);
  }
}

export const last: AggregateFunction = {
  name: 'last',
  eventArgs: 1,
  constants: [],
  description: 'the value of the last event to arrive, as it is (any type); null when empty',
  prepare(constants) {
    checkConstantCount('last', 1, [], 0, constants);
    return () => new Last();
  },
};
