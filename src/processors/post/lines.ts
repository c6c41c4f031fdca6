import type { PostprocessorType } from '../processor';

/** lines: appends a separator (default `\n`) to every frame. */
export const lines: PostprocessorType = {
  name: 'lines',
  create(config) {
    const separator = Buffer.from(typeof config.separator === 'string' ? config.separator : '\n', 'utf8');
    return { process: (frame) => [Buffer.concat([frame, separator])] };
  },
};
