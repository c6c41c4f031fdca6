/**
 * Where numbers stop and BigInts start, the same for every codec: an integer
 * whose magnitude is at most 2^53 is a number (every such integer is exact
 * as a double, and msgpackr's `int64AsType: 'auto'` draws the line there
 * too); beyond it, a BigInt.
 */
export const NUMBER_LIMIT = 2n ** 53n;

export function integerValue(big: bigint): number | bigint {
  return big <= NUMBER_LIMIT && big >= -NUMBER_LIMIT ? Number(big) : big;
}

/** Sets a key as an own property, even "__proto__" (a plain assignment would set the prototype). */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}
