import { zstd as format, attempt } from '../shared/compression';
import { mapPostprocessor } from '../shared/frame-map';

/** zstd: compresses each frame as one zstd frame (level 3, zstd's default). */
export const zstdCompress = mapPostprocessor('zstd', "Compresses each frame as one zstd frame (level 3, zstd's default).", (frame) =>
  attempt('zstd', (data) => format.compress(data), frame),
);
