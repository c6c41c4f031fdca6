/**
 * What a compiled expression is: a function of the variables it reads. Its
 * own module so the compiler (compile.ts) and the function families it
 * builds on (strings.ts) share it without importing each other.
 */

/** The variables an expression reads: the event's data and meta as they are. */
export interface Activation {
  readonly event: unknown;
  readonly meta: unknown;
  /** other declared variables (`compileAst`'s `variables`), by name */
  readonly vars?: Readonly<Record<string, unknown>>;
  /** the variables of the enclosing comprehensions, by the slot their scope gave them */
  readonly slots?: unknown[];
}

export type Compiled = (a: Activation) => unknown;
