import { needsPreciseStringify, stringifyPrecise } from './precise-stringify';

/**
 * Compact JSON text for any value, exact for BigInt: the native stringifier
 * when it suffices, the precise one otherwise. `undefined` becomes `null`.
 */
export function compactJson(value: unknown): string {
  return (needsPreciseStringify(value) ? stringifyPrecise(value) : JSON.stringify(value)) ?? 'null';
}
