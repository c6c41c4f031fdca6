import { TypeRegistry } from '../core/registry';
import type { CodecType } from '../codecs/codec';
import type { PostprocessorType, PreprocessorType } from '../processors/processor';
import type { OperatorType } from '../pipeline/operator';
import type { OfframpType, OnrampType } from '../connectors/connector';
import { builtinCodecs } from '../codecs';
import { builtinPostprocessors, builtinPreprocessors } from '../processors';
import { builtinOperators } from '../pipeline/operators';
import { builtinOfframps, builtinOnramps } from '../connectors';

/** Every type a runtime knows, by name. Owned by one Runtime. */
export class Registries {
  readonly onramps = new TypeRegistry<OnrampType<any>>('onramp'); // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly offramps = new TypeRegistry<OfframpType<any>>('offramp'); // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly codecs = new TypeRegistry<CodecType>('codec');
  readonly preprocessors = new TypeRegistry<PreprocessorType>('preprocessor');
  readonly postprocessors = new TypeRegistry<PostprocessorType>('postprocessor');
  readonly operators = new TypeRegistry<OperatorType<any>>('operator'); // eslint-disable-line @typescript-eslint/no-explicit-any

  static withBuiltins(): Registries {
    const r = new Registries();
    for (const t of builtinOnramps) r.onramps.register(t.name, t);
    for (const t of builtinOfframps) r.offramps.register(t.name, t);
    for (const t of builtinCodecs) r.codecs.register(t.name, t);
    for (const t of builtinPreprocessors) r.preprocessors.register(t.name, t);
    for (const t of builtinPostprocessors) r.postprocessors.register(t.name, t);
    for (const t of builtinOperators) r.operators.register(t.name, t);
    return r;
  }
}
