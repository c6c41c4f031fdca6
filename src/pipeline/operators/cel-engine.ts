/**
 * The CEL engine behind runtime::cel: @bufbuild/cel (chosen by bench/cel.ts,
 * see README.md here). Kept behind this small interface so the library can be
 * swapped without touching the operator.
 */
import { celEnv, isCelError, isCelList, isCelMap, isCelUint, parse, plan, type CelInput } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

export interface CelProgram {
  readonly source: string;
  /** evaluates against `event` (the data) and `meta`; throws an Error on an evaluation error */
  evaluate(vars: CelVars): unknown;
  /** evaluates against any variables (converted with `toCel`), e.g. an aggregate's output fields for `having` */
  evaluateWith(vars: Readonly<Record<string, unknown>>): unknown;
}

/** The variables an expression sees, already converted with `toCel`. */
export type CelVars = { readonly event: unknown; readonly meta: unknown };

// one environment for every program: the standard functions plus the strings
// extension (lowerAscii, replace, split, …), which log processing needs
const env = celEnv({ funcs: strings });

/**
 * Compiles once. A syntax error is thrown with its position,
 * e.g. `1:9: found + but expecting end of input`.
 */
export function compileCel(source: string): CelProgram {
  let run: ReturnType<typeof plan>;
  try {
    run = plan(env, parse(source));
  } catch (err) {
    throw new Error(String(err instanceof Error ? err.message : err).replace(/^<input>:/, ''));
  }
  return {
    source,
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
  for (const [k, v] of Object.entries(value)) out[k] = toCel(v);
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
    for (const [k, v] of value.entries()) out[String(k)] = fromCel(v);
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
  return String(value);
}

function toNumber(n: bigint): number | bigint {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}
