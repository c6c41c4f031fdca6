import { snappy as format, attempt } from '../shared/compression';
import { mapPostprocessor } from '../shared/frame-map';

/** snappy: compresses each frame as snappy, framing format. */
export const snappyCompress = mapPostprocessor('snappy', 'Compresses each frame as snappy, framing format.', (frame) =>
  attempt('snappy', (data) => format.compress!(data), frame),
);
