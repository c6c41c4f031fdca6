import type { PostprocessorType, PreprocessorType } from './processor';
import { base64 as base64Post } from './post/base64';
import { gelfChunking as gelfChunkingPost } from './post/gelf-chunking';
import { gzipCompress } from './post/gzip';
import { ingestNs as ingestNsPost } from './post/ingest-ns';
import { lengthPrefixed as lengthPrefixedPost } from './post/length-prefixed';
import { lines as linesPost } from './post/lines';
import { lz4Compress } from './post/lz4';
import { snappyCompress } from './post/snappy';
import { textualLengthPrefix as textualLengthPrefixPost } from './post/textual-length-prefix';
import { xz2Compress } from './post/xz2';
import { zlibCompress } from './post/zlib';
import { base64 as base64Pre } from './pre/base64';
import { decompress } from './pre/decompress';
import { gelfChunking as gelfChunkingPre } from './pre/gelf-chunking';
import { gelfChunkingTcp } from './pre/gelf-chunking-tcp';
import { gzipDecompress } from './pre/gzip';
import { ingestNs as ingestNsPre } from './pre/ingest-ns';
import { lengthPrefixed as lengthPrefixedPre } from './pre/length-prefixed';
import { lines as linesPre } from './pre/lines';
import { linesCrNoBuffer } from './pre/lines-cr-no-buffer';
import { linesNoBuffer } from './pre/lines-no-buffer';
import { linesNull } from './pre/lines-null';
import { linesPipe } from './pre/lines-pipe';
import { lz4Decompress } from './pre/lz4';
import { removeEmpty } from './pre/remove-empty';
import { snappyDecompress } from './pre/snappy';
import { textualLengthPrefix as textualLengthPrefixPre } from './pre/textual-length-prefix';
import { xz2Decompress } from './pre/xz2';
import { zlibDecompress } from './pre/zlib';

/** The builtin processors. Adding one is one file plus one line here. */
export const builtinPreprocessors: readonly PreprocessorType[] = [
  linesPre,
  linesNull,
  linesPipe,
  linesNoBuffer,
  linesCrNoBuffer,
  base64Pre,
  gzipDecompress,
  zlibDecompress,
  xz2Decompress,
  snappyDecompress,
  lz4Decompress,
  decompress,
  removeEmpty,
  gelfChunkingPre,
  gelfChunkingTcp,
  ingestNsPre,
  lengthPrefixedPre,
  textualLengthPrefixPre,
];

export const builtinPostprocessors: readonly PostprocessorType[] = [
  linesPost,
  base64Post,
  gzipCompress,
  zlibCompress,
  xz2Compress,
  snappyCompress,
  lz4Compress,
  ingestNsPost,
  lengthPrefixedPost,
  gelfChunkingPost,
  textualLengthPrefixPost,
];
