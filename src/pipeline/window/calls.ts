/**
 * The `aggregate` entries of window::aggregate: `field: 'name(arg, …)'`.
 * The name picks an aggregate function (src/pipeline/aggregate); its first
 * arguments are CEL expressions evaluated on each event, the rest are
 * constants evaluated once (a percentile's q, a collect's limit).
 */
import { AGGREGATE_FUNCTIONS, type Accumulator } from '../aggregate/functions';
import { compileEventExpression, evaluateConstant, type EventExpression, type EventScope } from './expressions';

export interface AggregateCall {
  /** the output field */
  readonly field: string;
  readonly source: string;
  /** evaluated on every event, in order */
  readonly args: readonly EventExpression[];
  /** a fresh accumulator for a new group */
  readonly accumulator: () => Accumulator;
  /** throws when the function would refuse these values, so an event is checked before any window counts it */
  readonly check: (values: readonly unknown[]) => void;
}

const CALL = /^\s*([a-z_][a-z0-9_]*)\s*\(([\s\S]*)\)\s*$/;

/** Parses and compiles one entry; throws an Error saying what is wrong (the caller names node and field). */
export function compileCall(field: string, source: string): AggregateCall {
  const m = CALL.exec(source);
  if (!m) throw new Error(`${JSON.stringify(source)} is not a call such as count() or sum(event.size)`);
  const [, name, argText] = m;
  const fn = AGGREGATE_FUNCTIONS.get(name);
  if (!fn) throw new Error(`unknown aggregate function '${name}' (known: ${[...AGGREGATE_FUNCTIONS.keys()].join(', ')})`);
  const args = splitArguments(argText);
  const required = fn.eventArgs + fn.constants.length - (fn.optionalConstants ?? 0);
  const most = fn.eventArgs + fn.constants.length;
  if (args.length < required || args.length > most) {
    const names = [...Array.from({ length: fn.eventArgs }, (_, i) => (fn.eventArgs === 1 ? 'value' : `value${i + 1}`)), ...fn.constants];
    throw new Error(
      `${name}(${names.join(', ')}) takes ${required === most ? most : `${required} to ${most}`} argument${most === 1 ? '' : 's'}, got ${args.length}`,
    );
  }
  const compiled = args.slice(0, fn.eventArgs).map((arg, i) => {
    if (arg === 'event') return WHOLE_EVENT;
    try {
      return compileEventExpression(arg);
    } catch (err) {
      throw new Error(`${name} argument ${i + 1}: ${(err as Error).message}`);
    }
  });
  const constants = args.slice(fn.eventArgs).map((arg, i) => {
    try {
      return evaluateConstant(arg);
    } catch (err) {
      throw new Error(`${name} argument ${fn.constants[i]}: must be a constant: ${(err as Error).message}`);
    }
  });
  return { field, source, args: compiled, accumulator: fn.prepare(constants), check: fn.check ?? (() => undefined) };
}

/**
 * `event` alone (`collect(event)`, Tremor's group-by-count): the event's data
 * as it is, as a field read gives a field's value. Through CEL it would be
 * converted to CEL values and back on every event (measured: ~30 % of that
 * benchmark's CPU) for the same JSON value. TODO: expressions.ts's field-read
 * fast path could take a path of no fields; then this goes.
 */
const WHOLE_EVENT: EventExpression = {
  source: 'event',
  fields: undefined,
  evaluate: (scope: EventScope) => (scope.event.data === undefined ? null : scope.event.data),
};

/** Splits `a, f(b, c), "x,y"` at its top-level commas. */
export function splitArguments(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last !== '' || out.length > 0) out.push(last);
  if (out.some((a) => a === '')) throw new Error('an argument is empty');
  return out;
}
