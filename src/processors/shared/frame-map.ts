import type { PostprocessorType, PreprocessorType } from '../processor';
import { onlyKeys } from './options';

/** A preprocessor that turns each chunk into exactly one frame and keeps no state. */
export function mapPreprocessor(name: string, transform: (chunk: Buffer) => Buffer): PreprocessorType {
  return {
    name,
    create(config) {
      onlyKeys(name, config, []);
      return { process: (chunk) => [transform(chunk)] };
    },
  };
}

/** A postprocessor that turns each frame into exactly one frame and keeps no state. */
export function mapPostprocessor(name: string, transform: (frame: Buffer) => Buffer): PostprocessorType {
  return {
    name,
    create(config) {
      onlyKeys(name, config, []);
      return { process: (frame) => [transform(frame)] };
    },
  };
}
