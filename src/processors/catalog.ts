/* eslint-disable @typescript-eslint/no-require-imports -- each module is required when its type is first looked up, so a process loads only what its config names (an import would load every one at start) */
import type { LazyType } from '../core/registry';
import type { PostprocessorType, PreprocessorType } from './processor';

/**
 * The builtin processors by name, each module (and its compression library)
 * required when the processor is first looked up. Adding one is one file
 * plus one line here.
 */
export const preprocessorCatalog: readonly LazyType<PreprocessorType>[] = [
  { name: 'lines', load: () => (require('./pre/lines') as typeof import('./pre/lines')).lines },
  { name: 'lines-null', load: () => (require('./pre/lines-null') as typeof import('./pre/lines-null')).linesNull },
  { name: 'lines-pipe', load: () => (require('./pre/lines-pipe') as typeof import('./pre/lines-pipe')).linesPipe },
  { name: 'lines-no-buffer', load: () => (require('./pre/lines-no-buffer') as typeof import('./pre/lines-no-buffer')).linesNoBuffer },
  { name: 'lines-cr-no-buffer', load: () => (require('./pre/lines-cr-no-buffer') as typeof import('./pre/lines-cr-no-buffer')).linesCrNoBuffer },
  { name: 'base64', load: () => (require('./pre/base64') as typeof import('./pre/base64')).base64 },
  { name: 'gzip', load: () => (require('./pre/gzip') as typeof import('./pre/gzip')).gzipDecompress },
  { name: 'zlib', load: () => (require('./pre/zlib') as typeof import('./pre/zlib')).zlibDecompress },
  { name: 'xz2', load: () => (require('./pre/xz2') as typeof import('./pre/xz2')).xz2Decompress },
  { name: 'snappy', load: () => (require('./pre/snappy') as typeof import('./pre/snappy')).snappyDecompress },
  { name: 'lz4', load: () => (require('./pre/lz4') as typeof import('./pre/lz4')).lz4Decompress },
  { name: 'zstd', load: () => (require('./pre/zstd') as typeof import('./pre/zstd')).zstdDecompress },
  { name: 'decompress', load: () => (require('./pre/decompress') as typeof import('./pre/decompress')).decompress },
  { name: 'remove-empty', load: () => (require('./pre/remove-empty') as typeof import('./pre/remove-empty')).removeEmpty },
  { name: 'gelf-chunking', load: () => (require('./pre/gelf-chunking') as typeof import('./pre/gelf-chunking')).gelfChunking },
  { name: 'gelf-chunking-tcp', load: () => (require('./pre/gelf-chunking-tcp') as typeof import('./pre/gelf-chunking-tcp')).gelfChunkingTcp },
  { name: 'ingest-ns', load: () => (require('./pre/ingest-ns') as typeof import('./pre/ingest-ns')).ingestNs },
  { name: 'length-prefixed', load: () => (require('./pre/length-prefixed') as typeof import('./pre/length-prefixed')).lengthPrefixed },
  { name: 'textual-length-prefix', load: () => (require('./pre/textual-length-prefix') as typeof import('./pre/textual-length-prefix')).textualLengthPrefix },
];

export const postprocessorCatalog: readonly LazyType<PostprocessorType>[] = [
  { name: 'lines', load: () => (require('./post/lines') as typeof import('./post/lines')).lines },
  { name: 'base64', load: () => (require('./post/base64') as typeof import('./post/base64')).base64 },
  { name: 'gzip', load: () => (require('./post/gzip') as typeof import('./post/gzip')).gzipCompress },
  { name: 'zlib', load: () => (require('./post/zlib') as typeof import('./post/zlib')).zlibCompress },
  { name: 'xz2', load: () => (require('./post/xz2') as typeof import('./post/xz2')).xz2Compress },
  { name: 'snappy', load: () => (require('./post/snappy') as typeof import('./post/snappy')).snappyCompress },
  { name: 'lz4', load: () => (require('./post/lz4') as typeof import('./post/lz4')).lz4Compress },
  { name: 'zstd', load: () => (require('./post/zstd') as typeof import('./post/zstd')).zstdCompress },
  { name: 'ingest-ns', load: () => (require('./post/ingest-ns') as typeof import('./post/ingest-ns')).ingestNs },
  { name: 'length-prefixed', load: () => (require('./post/length-prefixed') as typeof import('./post/length-prefixed')).lengthPrefixed },
  { name: 'gelf-chunking', load: () => (require('./post/gelf-chunking') as typeof import('./post/gelf-chunking')).gelfChunking },
  { name: 'textual-length-prefix', load: () => (require('./post/textual-length-prefix') as typeof import('./post/textual-length-prefix')).textualLengthPrefix },
];
/* eslint-enable @typescript-eslint/no-require-imports -- the catalog ends here */
