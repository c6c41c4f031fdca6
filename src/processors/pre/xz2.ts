import { xzFormat as format, attempt, checkFormatInstalled } from '../shared/compression';
import { mapPreprocessor } from '../shared/frame-map';

checkFormatInstalled(format, 'the xz2 preprocessor');

/** xz2: decompresses each chunk as xz (the name is the original's). */
export const xz2Decompress = mapPreprocessor('xz2', 'Decompresses each chunk as xz.', (chunk) => attempt('xz2', format.decompress, chunk));
