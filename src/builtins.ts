import type { CodecType } from './codecs/codec';
import { builtinCodecs } from './codecs';
import type { OfframpType, OnrampType } from './connectors/connector';
import { builtinOfframps, builtinOnramps } from './connectors';
import type { OperatorType } from './pipeline/operator';
import { builtinOperators } from './pipeline/operators';
import type { PostprocessorType, PreprocessorType } from './processors/processor';
import { builtinPostprocessors, builtinPreprocessors } from './processors';

function byName<T extends { readonly name: string }>(types: readonly T[]): Readonly<Record<string, T>> {
  return Object.freeze(Object.fromEntries(types.map((t) => [t.name, t])));
}

/** The built-in operator types by type name: `operators['generic::batch'].create(config, ctx)`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const operators: Readonly<Record<string, OperatorType<any>>> = byName(builtinOperators);
/** The built-in codecs by name: `codecs.json.create().decode(bytes)`. */
export const codecs: Readonly<Record<string, CodecType>> = byName(builtinCodecs);
/** The built-in preprocessors by name: `preprocessors.lines.create({})`. */
export const preprocessors: Readonly<Record<string, PreprocessorType>> = byName(builtinPreprocessors);
/** The built-in postprocessors by name: `postprocessors.gzip.create({})`. */
export const postprocessors: Readonly<Record<string, PostprocessorType>> = byName(builtinPostprocessors);
/** The built-in onramp types by name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const onramps: Readonly<Record<string, OnrampType<any>>> = byName(builtinOnramps);
/** The built-in offramp types by name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const offramps: Readonly<Record<string, OfframpType<any>>> = byName(builtinOfframps);
