import type { PostprocessorType, PreprocessorType } from './processor';
import { lines as linesPre } from './pre/lines';
import { lines as linesPost } from './post/lines';

/** The builtin processors. Adding one is one file plus one line here. */
export const builtinPreprocessors: readonly PreprocessorType[] = [linesPre];
export const builtinPostprocessors: readonly PostprocessorType[] = [linesPost];
