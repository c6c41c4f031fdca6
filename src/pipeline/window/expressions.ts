/**
 * The CEL expressions of a processing operator (time, group keys, aggregate
 * arguments, where), compiled once, evaluated per event.
 *
 * They run compiled (src/pipeline/cel/compile.ts) on the event as it is,
 * touching only the fields they name; an expression outside the compiled
 * subset runs on the interpreter, with the event converted once (`toCel`)
 * and shared by every such expression of the event. Both give the same
 * JSON-friendly values (`fromCel`), and a missing field is the same error
 * (`field not found: x`).
 */
import type { EddyEvent } from '../../core/event';
import { compileCel, fromCel, toCel, type CelProgram, type CelScope, type CelVars } from '../operators/cel-engine';

/** One event's view for its expressions: the CEL conversion is made at most once, when an interpreted expression needs it. */
export class EventScope implements CelScope {
  private vars?: CelVars;

  constructor(readonly event: EddyEvent) {}

  get data(): unknown {
    return this.event.data;
  }

  get meta(): unknown {
    return this.event.meta;
  }

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

/** Compiles an expression; a syntax error is thrown with its position. */
export function compileEventExpression(source: string): EventExpression {
  return new CelExpression(source, compileCel(source));
}

class CelExpression implements EventExpression {
  constructor(
    readonly source: string,
    private readonly program: CelProgram,
  ) {}

  evaluate(scope: EventScope): unknown {
    return this.program.evaluateJson(scope);
  }
}

/** A constant argument (a percentile's q, a collect's limit): evaluated once, at publish, with no event. */
export function evaluateConstant(source: string): unknown {
  return fromCel(compileCel(source).evaluateWith({}));
}
