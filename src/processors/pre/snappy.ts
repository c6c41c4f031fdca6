import { snappy as format, attempt, checkFormatInstalled } from '../shared/compression';
import { mapPreprocessor } from '../shared/frame-map';

checkFormatInstalled(format, 'the snappy preprocessor');

/** snappy: decompresses each chunk as snappy, framing format. */
export const snappyDecompress = mapPreprocessor('snappy', 'Decompresses each chunk as snappy, framing format.', (chunk) =>
  attempt('snappy', format.decompress, chunk),
);
