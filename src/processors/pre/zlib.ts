import { zlibFormat as format, attempt } from '../shared/compression';
import { mapPreprocessor } from '../shared/frame-map';

/** zlib: decompresses each chunk as zlib (deflate with the zlib header). */
export const zlibDecompress = mapPreprocessor('zlib', 'Decompresses each chunk as zlib (deflate with the zlib header).', (chunk) =>
  attempt('zlib', format.decompress, chunk),
);
