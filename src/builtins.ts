import type { CodecType } from './codecs/codec';
import { codecCatalog } from './codecs/catalog';
import type { AnyOfframpType, AnyOnrampType } from './connectors/connector';
import { offrampCatalog, onrampCatalog } from './connectors/catalog';
import type { LazyType } from './core/registry';
import type { AnyOperatorType } from './pipeline/operator';
import { operatorCatalog } from './pipeline/operators/catalog';
import type { PostprocessorType, PreprocessorType } from './processors/processor';
import { postprocessorCatalog, preprocessorCatalog } from './processors/catalog';

/**
 * A frozen record of types by name whose properties are getters: a type's
 * module (and the libraries it needs) is required when the property is first
 * read, so importing `eddy` does not load @platformatic/kafka, pg, grpc and the rest.
 */
function byName<T>(catalog: readonly LazyType<T>[]): Readonly<Record<string, T>> {
  const record: Record<string, T> = {};
  for (const { name, load } of catalog) {
    let loaded: T | undefined;
    Object.defineProperty(record, name, { enumerable: true, get: () => (loaded ??= load()) });
  }
  return Object.freeze(record);
}

/** The built-in operator types by type name: `operators['generic::batch'].create(config, ctx)`. */
export const operators: Readonly<Record<string, AnyOperatorType>> = byName(operatorCatalog);
/** The built-in codecs by name: `codecs.json.create().decode(bytes)`. */
export const codecs: Readonly<Record<string, CodecType>> = byName(codecCatalog);
/** The built-in preprocessors by name: `preprocessors.lines.create({})`. */
export const preprocessors: Readonly<Record<string, PreprocessorType>> = byName(preprocessorCatalog);
/** The built-in postprocessors by name: `postprocessors.gzip.create({})`. */
export const postprocessors: Readonly<Record<string, PostprocessorType>> = byName(postprocessorCatalog);
/** The built-in onramp types by name. */
export const onramps: Readonly<Record<string, AnyOnrampType>> = byName(onrampCatalog);
/** The built-in offramp types by name. */
export const offramps: Readonly<Record<string, AnyOfframpType>> = byName(offrampCatalog);
