import { xzFormat as format, attempt, checkFormatInstalled } from '../shared/compression';
import { mapPostprocessor } from '../shared/frame-map';

checkFormatInstalled(format, 'the xz2 postprocessor');

/** xz2: compresses each frame as xz, at the library default preset (the original used 9, whose 674 MiB encoder memory per frame is not worth it). */
export const xz2Compress = mapPostprocessor('xz2', 'Compresses each frame as xz, at the library default preset.', (frame) =>
  attempt('xz2', (data) => format.compress(data), frame),
);
