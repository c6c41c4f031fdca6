import { zlibFormat as format, attempt } from '../shared/compression';
import { mapPostprocessor } from '../shared/frame-map';

/** zlib: compresses each frame as zlib (deflate with the zlib header). */
export const zlibCompress = mapPostprocessor('zlib', 'Compresses each frame as zlib (deflate with the zlib header).', (frame) =>
  attempt('zlib', (data) => format.compress(data), frame),
);
