import type { PostprocessorType } from '../processor';
import { onlyKeys, separatorByte } from '../shared/options';

/** lines: appends a separator (default `\n`, or the one-byte `separator`) to every frame. */
export const lines: PostprocessorType = {
  name: 'lines',
  create(config) {
    onlyKeys('lines', config, ['separator']);
    const separator = Buffer.of(separatorByte('lines', config, 0x0a));
    return { process: (frame) => [Buffer.concat([frame, separator])] };
  },
};
