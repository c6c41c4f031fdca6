import { attempt, detectFormat } from '../shared/compression';
import { mapPreprocessor } from '../shared/frame-map';

/**
 * decompress: recognises gzip, zlib, xz, snappy (framed), lz4 (frame) and
 * zstd by their magic bytes and decompresses the chunk; a chunk in none of
 * them passes through unchanged. A chunk that has the magic but does not
 * decompress is an error.
 */
export const decompress = mapPreprocessor(
  'decompress',
  'Decompresses each chunk whose magic bytes say gzip, zlib, xz, snappy (framed), lz4 (frame) or zstd; other chunks pass unchanged.',
  (chunk) => {
    const format = detectFormat(chunk);
    return format ? attempt(`decompress (${format.name})`, format.decompress, chunk) : chunk;
  },
);
