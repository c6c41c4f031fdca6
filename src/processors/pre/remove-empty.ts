import type { PreprocessorType } from '../processor';
import { onlyKeys } from '../shared/options';

/** remove-empty: drops empty chunks (the empty lines `lines` keeps). */
export const removeEmpty: PreprocessorType = {
  name: 'remove-empty',
  create(config) {
    onlyKeys('remove-empty', config, []);
    return { process: (chunk) => (chunk.length === 0 ? [] : [chunk]) };
  },
};
