import type { PostprocessorType, PreprocessorType } from '../processor';
import { processorSchema } from './options';

/** A preprocessor that takes no config, turns each chunk into exactly one frame and keeps no state. */
export function mapPreprocessor(name: string, summary: string, transform: (chunk: Buffer) => Buffer): PreprocessorType {
  return {
    name,
    configSchema: processorSchema(summary),
    create: () => ({ process: (chunk) => [transform(chunk)] }),
  };
}

/** A postprocessor that takes no config, turns each frame into exactly one frame and keeps no state. */
export function mapPostprocessor(name: string, summary: string, transform: (frame: Buffer) => Buffer): PostprocessorType {
  return {
    name,
    configSchema: processorSchema(summary),
    create: () => ({ process: (frame) => [transform(frame)] }),
  };
}
