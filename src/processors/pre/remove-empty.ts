import type { PreprocessorType } from '../processor';
import { processorSchema } from '../shared/options';

/** remove-empty: drops empty chunks (the empty lines `lines` keeps). */
export const removeEmpty: PreprocessorType = {
  name: 'remove-empty',
  configSchema: processorSchema('Drops empty frames (the empty lines `lines` keeps).'),
  create: () => ({ process: (chunk) => (chunk.length === 0 ? [] : [chunk]) }),
};
