import type { PostprocessorType, PreprocessorType } from './processor';
import { loadAll } from '../core/registry';
import { postprocessorCatalog, preprocessorCatalog } from './catalog';

/** Every builtin processor, loaded (a Runtime loads them by name from ./catalog). */
export const builtinPreprocessors: readonly PreprocessorType[] = loadAll(preprocessorCatalog);
export const builtinPostprocessors: readonly PostprocessorType[] = loadAll(postprocessorCatalog);
