import type { PostprocessorType } from '../processor';
import { onlyKeys } from '../shared/options';

/** textual-length-prefix: prefixes each frame with its length in ASCII decimal and a space. */
export const textualLengthPrefix: PostprocessorType = {
  name: 'textual-length-prefix',
  create(config) {
    onlyKeys('textual-length-prefix', config, []);
    return { process: (frame) => [Buffer.concat([Buffer.from(`${frame.length} `, 'latin1'), frame])] };
  },
};
