import { gzip as format, attempt } from '../shared/compression';
import { mapPreprocessor } from '../shared/frame-map';

/** gzip: decompresses each chunk as gzip (every member of a multi-member stream). */
export const gzipDecompress = mapPreprocessor('gzip', 'Decompresses each chunk as gzip (every member of a multi-member stream).', (chunk) =>
  attempt('gzip', format.decompress, chunk),
);
