import { lz4 as format, attempt, checkFormatInstalled } from '../shared/compression';
import { mapPostprocessor } from '../shared/frame-map';

checkFormatInstalled(format, 'the lz4 postprocessor');

/** lz4: compresses each frame as lz4, frame format. */
export const lz4Compress = mapPostprocessor('lz4', 'Compresses each frame as lz4, frame format.', (frame) =>
  attempt('lz4', (data) => format.compress(data), frame),
);
