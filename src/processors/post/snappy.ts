import { snappy as format, attempt, checkFormatInstalled } from '../shared/compression';
import { mapPostprocessor } from '../shared/frame-map';

checkFormatInstalled(format, 'the snappy postprocessor');

/** snappy: compresses each frame as snappy, framing format. */
export const snappyCompress = mapPostprocessor('snappy', 'Compresses each frame as snappy, framing format.', (frame) =>
  attempt('snappy', (data) => format.compress(data), frame),
);
