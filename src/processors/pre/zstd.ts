import { zstd as format, attempt } from '../shared/compression';
import { mapPreprocessor } from '../shared/frame-map';

/** zstd: decompresses each chunk as zstd (every frame of it; skippable frames are skipped). */
export const zstdDecompress = mapPreprocessor('zstd', 'Decompresses each chunk as zstd (every frame of it; skippable frames are skipped).', (chunk) =>
  attempt('zstd', format.decompress, chunk),
);
