/**
 * The CEL engine behind runtime::cel and the window operators: expressions
 * in the compiled subset (src/pipeline/cel/compile.ts) run as JavaScript
 * closures on the event as it is; every other expression, and any
 * evaluation the compiled code declines (values.ts `Bail`), runs on the
 * @bufbuild/cel interpreter (chosen by bench/cel.ts, see README.md here)
 * with the event converted by `toCel`. Both give the same results.
 */
import { celEnv, isCelError, isCelList, isCelMap, isCelUint, parse, plan, type CelInput } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { setOwn } from '../../codecs/integers';
import { compileAst, type Compiled } from './compile';
import { eventFields, literalStrings } from './fields';
import { Bail, CelEvalError, toJson } from './values';

export interface CelProgram {
  readonly source: string;
  /** true when the expression runs compiled (the interpreter only for the evaluations the compiled code declines) */
  readonly compiled: boolean;
  /**
   * The top-level fields of `event` the expression reads (`event.a`,
   * `has(event.a)`), or undefined when it may read the whole event: an
   * evaluation given an object with just these fields of the event gives
   * what it gives on the whole event.
   */
  readonly eventFields: readonly string[] | undefined;
  /** every string the expression can give, when each result is a string literal (see `literalStrings`); undefined otherwise */
  readonly literalResults: readonly string[] | undefined;
  /**
   * Evaluates against the event as it is and returns a JSON-friendly value
   * (what `fromCel` gives); `scope.cel()` is asked only when the interpreter
   * runs. Throws an Error on an evaluation error.
   */
  evaluateJson(scope: CelScope): unknown;
  /** evaluates against `event` (the data) and `meta`; throws an Error on an evaluation error */
  evaluate(vars: CelVars): unknown;
  /** evaluates against any variables (converted with `toCel`), e.g. an aggregate's output fields for `having` */
  evaluateWith(vars: Readonly<Record<string, unknown>>): unknown;
}

/** The variables an expression sees, already converted with `toCel`. */
// eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- a type, not an interface: the interpreter reads it as a Record<string, CelInput>, which an interface (no implicit index signature) cannot be
export type CelVars = { readonly event: unknown; readonly meta: unknown };

/** One event for its expressions: the data and meta as they are, and their CEL conversion, made at most once and only if an interpreted expression needs it. */
export interface CelScope {
  readonly data: unknown;
  readonly meta: unknown;
  cel(): CelVars;
}

export class LazyCelScope implements CelScope {
  private vars?: CelVars;

  constructor(
    readonly data: unknown,
    readonly meta: unknown,
  ) {}

  cel(): CelVars {
    this.vars ??= { event: toCel(this.data), meta: toCel(this.meta) };
    return this.vars;
  }
}

// one environment for every program: the standard functions plus the strings
// extension (lowerAscii, replace, split, …), which log processing needs
const env = celEnv({ funcs: strings });

/**
 * Compiles once. A syntax error is thrown with its position,
 * e.g. `1:9: found + but expecting end of input`. `interpreterOnly` skips the
 * compiled path (the tests compare both).
 */
export function compileCel(source: string, options: { interpreterOnly?: boolean } = {}): CelProgram {
  let run: ReturnType<typeof plan>;
  let fast: Compiled | undefined;
  let fields: string[] | undefined;
  let literals: string[] | undefined;
  try {
    const ast = parse(source);
    fields = eventFields(ast.expr);
    literals = literalStrings(ast.expr);
    run = plan(env, ast);
    fast = options.interpreterOnly === true ? undefined : compileAst(ast.expr);
  } catch (err) {
    throw new Error(String(err instanceof Error ? err.message : err).replace(/^<input>:/, ''));
  }
  const interpret = (scope: CelScope): unknown => {
    const result = run(scope.cel() as Record<string, CelInput>);
    if (isCelError(result)) throw new Error(result.message);
    return fromCel(result);
  };
  return {
    source,
    compiled: fast !== undefined,
    eventFields: fields,
    literalResults: literals,
    evaluateJson:
      fast === undefined
        ? interpret
        : (scope) => {
            try {
              return toJson(fast({ event: scope.data, meta: scope.meta }));
            } catch (err) {
              if (err instanceof Bail) return interpret(scope);
              if (err instanceof CelEvalError) throw new Error(err.message);
              throw err;
            }
          },
    evaluate(vars) {
      const result = run({ event: vars.event as CelInput, meta: vars.meta as CelInput });
      if (isCelError(result)) throw new Error(result.message);
      return result;
    },
    evaluateWith(vars) {
      const result = run(vars as Record<string, CelInput>);
      if (isCelError(result)) throw new Error(result.message);
      return result;
    },
  };
}

/**
 * One evaluation of `program` on an event as runtime::cel makes it, and the
 * engine that gave the result: `interpreted` when the expression is not in
 * the compiled subset, or when the compiled code declined this evaluation
 * (the interpreter is the only one that asks the scope for its CEL
 * conversion). For `eddy cel`.
 */
export function evaluateTraced(program: CelProgram, data: unknown, meta: unknown): { value: unknown; engine: 'compiled' | 'interpreted' } {
  const scope = new LazyCelScope(data, meta);
  let interpreted = false;
  const traced: CelScope = {
    data,
    meta,
    cel: () => {
      interpreted = true;
      return scope.cel();
    },
  };
  const value = program.evaluateJson(traced);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- traced.cel() sets it during evaluateJson: the types do not follow a closure's assignment
  return { value, engine: program.compiled && !interpreted ? 'compiled' : 'interpreted' };
}

/**
 * JSON to CEL: integral numbers become CEL `int` so that `event.count + 1`
 * type-checks (CEL has no implicit int/double conversion); other numbers are
 * `double`. Everything else passes as is.
 */
export function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value instanceof Uint8Array) return value;
  const out: Record<string, unknown> = {};
  // setOwn: a "__proto__" key of the event stays a key (a plain assignment would set the prototype)
  for (const [k, v] of Object.entries(value)) setOwn(out, k, toCel(v));
  return out;
}

/**
 * CEL to JSON-friendly JS: ints and uints become numbers when exact (else
 * stay bigint, which the json codec writes as a number), lists arrays, maps
 * objects, timestamps RFC 3339 strings and durations `"1.5s"`.
 */
export function fromCel(value: unknown): unknown {
  if (typeof value === 'bigint') return toNumber(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return value;
  if (isCelUint(value)) return toNumber(value.value);
  if (isCelList(value)) return [...value].map(fromCel);
  if (isCelMap(value)) {
    const out: Record<string, unknown> = {};
    // a uint key is written as its digits, as the compiled path writes it
    for (const [k, v] of value.entries()) setOwn(out, String(isCelUint(k) ? k.value : k), fromCel(v));
    return out;
  }
  const message = (value as { message?: { $typeName?: string; seconds?: bigint; nanos?: number } }).message;
  if (message?.$typeName === 'google.protobuf.Timestamp') {
    const ms = Number(message.seconds ?? 0n) * 1000 + Math.floor((message.nanos ?? 0) / 1e6);
    return new Date(ms).toISOString();
  }
  if (message?.$typeName === 'google.protobuf.Duration') {
    return `${Number(message.seconds ?? 0n) + (message.nanos ?? 0) / 1e9}s`;
  }
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a CEL type (`type(x)`) prints its name; what else has no JSON form prints as JS prints it
  return String(value);
}

function toNumber(n: bigint): number | bigint {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}
