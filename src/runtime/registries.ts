import { TypeRegistry, type LazyType } from '../core/registry';
import type { CodecType } from '../codecs/codec';
import type { PostprocessorType, PreprocessorType } from '../processors/processor';
import type { AnyOperatorType } from '../pipeline/operator';
import type { AnyOfframpType, AnyOnrampType } from '../connectors/connector';
import { codecCatalog } from '../codecs/catalog';
import { postprocessorCatalog, preprocessorCatalog } from '../processors/catalog';
import { operatorCatalog } from '../pipeline/operators/catalog';
import { offrampCatalog, onrampCatalog } from '../connectors/catalog';

/** Every type a runtime knows, by name. Owned by one Runtime. */
export class Registries {
  readonly onramps = new TypeRegistry<AnyOnrampType>('onramp');
  readonly offramps = new TypeRegistry<AnyOfframpType>('offramp');
  readonly codecs = new TypeRegistry<CodecType>('codec');
  readonly preprocessors = new TypeRegistry<PreprocessorType>('preprocessor');
  readonly postprocessors = new TypeRegistry<PostprocessorType>('postprocessor');
  readonly operators = new TypeRegistry<AnyOperatorType>('operator');

  /** The builtin types, each loaded by name when an artefact first uses it. */
  static withBuiltins(): Registries {
    const r = new Registries();
    const lazily = <T>(registry: TypeRegistry<T>, catalog: readonly LazyType<T>[]) => {
      for (const entry of catalog) registry.registerLazy(entry.name, entry.load);
    };
    lazily(r.onramps, onrampCatalog);
    lazily(r.offramps, offrampCatalog);
    lazily(r.preprocessors, preprocessorCatalog);
    lazily(r.postprocessors, postprocessorCatalog);
    lazily(r.operators, operatorCatalog);
    lazily(r.codecs, codecCatalog);
    return r;
  }
}
