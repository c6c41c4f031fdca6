import type { PostprocessorType } from '../processor';
import { processorSchema, separatorProperty, withDefaults } from '../shared/options';

/** lines: appends a separator (default `\n`, or the one-byte `separator`) to every frame. */
const configSchema = processorSchema('Appends a separator to every frame.', {
  separator: separatorProperty('\n', 'the byte appended after each frame, as a one-character ASCII string'),
});

export const lines: PostprocessorType = {
  name: 'lines',
  configSchema,
  create(config) {
    const separator = Buffer.from(withDefaults(configSchema, config).separator, 'latin1');
    return { process: (frame) => [Buffer.concat([frame, separator])] };
  },
};
