import { lz4 as format, attempt, checkFormatInstalled } from '../shared/compression';
import { mapPreprocessor } from '../shared/frame-map';

checkFormatInstalled(format, 'the lz4 preprocessor');

/** lz4: decompresses each chunk as lz4, frame format. */
export const lz4Decompress = mapPreprocessor('lz4', 'Decompresses each chunk as lz4, frame format.', (chunk) => attempt('lz4', format.decompress, chunk));
