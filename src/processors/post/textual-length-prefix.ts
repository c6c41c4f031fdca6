import type { PostprocessorType } from '../processor';
import { processorSchema } from '../shared/options';

/** textual-length-prefix: prefixes each frame with its length in ASCII decimal and a space. */
export const textualLengthPrefix: PostprocessorType = {
  name: 'textual-length-prefix',
  configSchema: processorSchema('Prefixes each frame with its length in ASCII decimal and a space.'),
  create() {
    return { process: (frame) => [Buffer.concat([Buffer.from(`${frame.length} `, 'latin1'), frame])] };
  },
};
