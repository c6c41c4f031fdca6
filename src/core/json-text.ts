/**
 * `JSON.stringify(value)` typed as it behaves: undefined for undefined, a
 * function or a symbol (TypeScript's library says it always returns a string).
 */
export function jsonText(value: unknown): string | undefined {
  return JSON.stringify(value);
}
