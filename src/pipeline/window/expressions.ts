/**
 * The CEL expressions of a processing operator (time, group keys, aggregate
 * arguments, where), compiled once, evaluated per event.
 *
 * Most of them are plain field reads (`event.application`, `event.size`).
 * Those are read straight from the event, without converting the event into
 * CEL values first (`toCel` copies the whole event, integers into BigInt,
 * and costs more than the expression): an operator whose expressions are
 * all field reads never converts an event. Anything else goes to the CEL
 * engine, with the event converted once and shared by every expression.
 * Both give the same JSON-friendly values (`fromCel`), and a missing field
 * is the same error (`field not found: x`).
 */
import type { EddyEvent } from '../../core/event';
import { compileCel, fromCel, toCel, type CelProgram, type CelVars } from '../operators/cel-engine';

/** One event's view for its expressions: the CEL conversion is made at most once, when a full expression needs it. */
export class EventScope {
  private vars?: CelVars;

  constructor(readonly event: EddyEvent) {}

  cel(): CelVars {
    this.vars ??= { event: toCel(this.event.data), meta: toCel(this.event.meta) };
    return this.vars;
  }
}

export interface EventExpression {
  readonly source: string;
  /** the value for this event; throws an Error (the reason) when it cannot be evaluated */
  evaluate(scope: EventScope): unknown;
}

const FIELD_PATH = /^\s*(event|meta)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*$/;

/** Compiles an expression; a syntax error is thrown with its position. */
export function compileEventExpression(source: string): EventExpression {
  const path = FIELD_PATH.exec(source);
  if (path) return new FieldRead(source, path[1] as 'event' | 'meta', path[2].slice(1).split('.'));
  return new CelExpression(source, compileCel(source));
}

/** `event.a.b` read from the event as it is. */
class FieldRead implements EventExpression {
  constructor(
    readonly source: string,
    private readonly root: 'event' | 'meta',
    private readonly path: readonly string[],
  ) {}

  evaluate(scope: EventScope): unknown {
    let value: unknown = this.root === 'event' ? scope.event.data : scope.event.meta;
    for (const key of this.path) {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array || !Object.hasOwn(value, key)) {
        throw new Error(`field not found: ${key}`);
      }
      value = (value as Record<string, unknown>)[key];
    }
    return value === undefined ? null : value;
  }
}

class CelExpression implements EventExpression {
  constructor(
    readonly source: string,
    private readonly program: CelProgram,
  ) {}

  evaluate(scope: EventScope): unknown {
    return fromCel(this.program.evaluate(scope.cel()));
  }
}

/** A constant argument (a percentile's q, a collect's limit): evaluated once, at publish, with no event. */
export function evaluateConstant(source: string): unknown {
  return fromCel(compileCel(source).evaluateWith({}));
}
