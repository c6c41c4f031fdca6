/**
 * collect(x, limit): the values in arrival order, at most `limit` of them.
 * The values past the limit are not kept but counted: `dropped()`, and
 * `meta()` gives `{dropped: n}` for the output event's meta once there are
 * some, so a truncated list is never mistaken for a complete one.
 */
import type { Accumulator, AggregateFunction } from './function';
import { SnapshotReader, writeHeld } from './snapshot';
import { checkConstantCount, constantLabel, integerConstant, mergeable } from './values';

export const COLLECT_DEFAULT_LIMIT = 100;
/** a limit is a promise of bounded memory: keep it one */
export const COLLECT_MAX_LIMIT = 100_000;

export class Collect implements Accumulator {
  readonly values: unknown[] = [];
  private droppedCount = 0;
  constructor(readonly limit: number) {}

  add(values: readonly unknown[]): void {
    if (this.values.length < this.limit) this.values.push(values[0]);
    else this.droppedCount++;
  }

  /** a copy: the window may keep adding after a read */
  result(): unknown[] {
    return this.values.slice();
  }

  /** how many values arrived past the limit and are not in the result */
  dropped(): number {
    return this.droppedCount;
  }

  meta(): Readonly<Record<string, unknown>> | undefined {
    return this.droppedCount > 0 ? { dropped: this.droppedCount } : undefined;
  }

  merge(other: Accumulator): void {
    const o = mergeable('collect', Collect, other);
    for (const v of o.values) this.add([v]);
    this.droppedCount += o.droppedCount;
  }

  /**
   * `[dropped, values]`, or `[dropped, values, patches]` when JSON would not
   * give every value back as it was (snapshot.ts, `writeHeld`). Bytes are
   * base64 text in `values`, as the json codec writes them, and a patch
   * makes each a Buffer again (or the Uint8Array it was).
   */
  snapshot(): unknown[] {
    const { json, patches } = writeHeld(this.values);
    return patches.length === 0 ? [this.droppedCount, json] : [this.droppedCount, json, patches];
  }

  restore(snapshot: unknown): void {
    const reader = new SnapshotReader('collect');
    const [dropped, json, patches] = reader.list('the snapshot', snapshot, [2, 3]);
    const droppedCount = reader.count('dropped (the first item)', dropped);
    const values = reader.held('values (the second item)', json, patches);
    // the limit is the call's: a snapshot of a call with a larger one cannot be held
    if (values.length > this.limit) reader.fail('values (the second item)', `${values.length} values, more than the limit ${this.limit}`);
    this.droppedCount = droppedCount;
    this.values.length = 0;
    for (const v of values) this.values.push(v);
  }
}

const CONSTANTS = ['limit'];

export const collect: AggregateFunction = {
  name: 'collect',
  eventArgs: 1,
  constants: CONSTANTS,
  optionalConstants: 1,
  description: `the values in arrival order as a list, at most limit of them (default ${COLLECT_DEFAULT_LIMIT}, 1 to ${COLLECT_MAX_LIMIT}); the ones past it are counted in meta dropped; [] when empty`,
  prepare(constants) {
    checkConstantCount('collect', 1, CONSTANTS, 1, constants);
    const limit =
      constants.length === 0 ? COLLECT_DEFAULT_LIMIT : integerConstant('collect', constantLabel(1, CONSTANTS, 0), constants[0], 1, COLLECT_MAX_LIMIT);
    return () => new Collect(limit);
  },
};
