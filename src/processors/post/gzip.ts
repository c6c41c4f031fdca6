import { gzip as format, attempt } from '../shared/compression';
import { mapPostprocessor } from '../shared/frame-map';

/** gzip: compresses each frame as one gzip member. */
export const gzipCompress = mapPostprocessor('gzip', 'Compresses each frame as one gzip member.', (frame) =>
  attempt('gzip', (data) => format.compress(data), frame),
);
