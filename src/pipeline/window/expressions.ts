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
import { unreadFields } from '../../codecs/json/top-level';
import { compileCel, fromCel, toCel, type CelProgram, type CelScope, type CelVars } from '../cel/engine';

const UNREAD = Symbol('unread');

/**
 * One event's view for its expressions: the CEL conversion is made at most
 * once, when an interpreted expression needs it. With `frameKeys` (every
 * expression of the node reads only these top-level fields), an event still
 * undecoded from a json frame is not decoded: its data here is just those
 * fields, taken from the frame (codecs/json/top-level.ts, as runtime::cel
 * does), exact as a full decode gives them; anything the extractor is not
 * sure of decodes the event as before.
 */
export class EventScope implements CelScope {
  private vars?: CelVars;
  private fromFrame: Record<string, unknown> | undefined | typeof UNREAD = UNREAD;

  constructor(
    readonly event: EddyEvent,
    private readonly frameKeys?: readonly string[],
  ) {}

  get data(): unknown {
    if (this.frameKeys === undefined) return this.event.data;
    if (this.fromFrame === UNREAD) this.fromFrame = unreadFields(this.event, this.frameKeys);
    return this.fromFrame ?? this.event.data;
  }

  get meta(): unknown {
    return this.event.meta;
  }

  cel(): CelVars {
    this.vars ??= { event: toCel(this.data), meta: toCel(this.event.meta) };
    return this.vars;
  }
}

/**
 * The top-level event fields a set of expressions reads, when each reads
 * only such fields (`event.a`, `has(event.b)`); undefined when one reads
 * the event otherwise (the whole event, a macro over it): then events are
 * decoded as usual.
 */
export function frameKeysOf(expressions: readonly (EventExpression | undefined)[]): string[] | undefined {
  const keys = new Set<string>();
  for (const e of expressions) {
    if (e === undefined) continue;
    if (e.fields === undefined) return undefined;
    for (const f of e.fields) keys.add(f);
  }
  return [...keys];
}

export interface EventExpression {
  readonly source: string;
  /** the top-level fields of `event` it reads; undefined when it reads the event in any other way */
  readonly fields: readonly string[] | undefined;
  /** the value for this event; throws an Error (the reason) when it cannot be evaluated */
  evaluate(scope: EventScope): unknown;
}

/** `event.a.b`: a plain read of nested fields (CEL identifiers, no reserved words: those the compile rejects first). */
const FIELD_PATH = /^\s*event((?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)+)\s*$/;

/** Compiles an expression; a syntax error is thrown with its position. */
export function compileEventExpression(source: string): EventExpression {
  const program = compileCel(source);
  const path = FIELD_PATH.exec(source);
  if (path)
    return new FieldRead(
      source,
      program,
      path[1]
        .split('.')
        .slice(1)
        .map((name) => name.trim()),
    );
  return new CelExpression(source, program);
}

class CelExpression implements EventExpression {
  readonly fields: readonly string[] | undefined;

  constructor(
    readonly source: string,
    private readonly program: CelProgram,
  ) {
    this.fields = program.eventFields;
  }

  evaluate(scope: EventScope): unknown {
    return this.program.evaluateJson(scope);
  }
}

/** A constant argument (a percentile's q, a collect's limit): evaluated once, at publish, with no event. */
export function evaluateConstant(source: string): unknown {
  return fromCel(compileCel(source).evaluateWith({}));
}

/**
 * `event.a.b` (the usual group key or aggregate argument): the field read
 * straight from the data when every step is a plain object that has it and
 * the value is a string, a boolean or a non-zero number, which CEL gives back
 * as it is. Anything else (a missing field, a map, a list, a bigint, 0, null)
 * goes through the compiled program, so values and errors are CEL's own; the
 * direct read skips its activation object, conversions and try per event.
 */
class FieldRead implements EventExpression {
  readonly fields: readonly string[] | undefined;

  constructor(
    readonly source: string,
    private readonly program: CelProgram,
    private readonly path: readonly string[],
  ) {
    this.fields = program.eventFields;
  }

  evaluate(scope: EventScope): unknown {
    let value: unknown = scope.data;
    for (const key of this.path) {
      if (typeof value !== 'object' || value === null) return this.program.evaluateJson(scope);
      const proto: unknown = Object.getPrototypeOf(value);
      if ((proto !== Object.prototype && proto !== null) || !Object.hasOwn(value, key)) return this.program.evaluateJson(scope);
      value = (value as Record<string, unknown>)[key];
    }
    const type = typeof value;
    if (type === 'string' || type === 'boolean' || (type === 'number' && value !== 0)) return value;
    return this.program.evaluateJson(scope);
  }
}
