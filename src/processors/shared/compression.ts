import type * as Lzma from '@napi-rs/lzma';
import type * as Lz4 from 'lz4-napi';
import { checkInstalled, lazyPackage, type OptionalPackage } from '../../core/packages';
import * as zlib from 'node:zlib';
import { compressSnappyFramed, decompressSnappyFramed, SNAPPY_STREAM_IDENTIFIER } from './snappy-framed';

/**
 * The compression formats, each one frame in, one frame out, synchronously:
 * a processor works on one chunk at a time and must not reorder frames.
 */
export interface CompressionFormat {
  readonly name: string;
  /** leading bytes that identify the format, for `decompress` */
  readonly magic: readonly (readonly number[])[];
  /** plain functions (properties, not methods): the processors hand them to `attempt` */
  decompress: (data: Buffer) => Buffer;
  compress?: (data: Buffer) => Buffer;
  /** the optional npm package the format's functions load on first use (docs/install.md) */
  readonly package?: OptionalPackage;
}

/** A format eddy also writes: the compress postprocessors take one. */
export interface WritableFormat extends CompressionFormat {
  compress: (data: Buffer) => Buffer;
}

/** For a processor of one format: fails the lookup of the processor (a publish) when the format's package is missing. */
export function checkFormatInstalled(format: CompressionFormat, processor: string): void {
  if (format.package !== undefined) checkInstalled(format.package, processor);
}

const lzma = lazyPackage<typeof Lzma>('@napi-rs/lzma', 'xz compression');
const lz4Frames = lazyPackage<typeof Lz4>('lz4-napi', 'lz4 compression');

export const gzip: WritableFormat = {
  name: 'gzip',
  magic: [[0x1f, 0x8b]],
  // gunzipSync reads every member of a multi-member file, as `gzip -d` does
  decompress: (data) => zlib.gunzipSync(data),
  compress: (data) => zlib.gzipSync(data),
};

export const zlibFormat: WritableFormat = {
  name: 'zlib',
  // the CMF/FLG pairs zlib writes at its four compression levels
  magic: [
    [0x78, 0x01],
    [0x78, 0x5e],
    [0x78, 0x9c],
    [0x78, 0xda],
  ],
  decompress: (data) => zlib.inflateSync(data),
  compress: (data) => zlib.deflateSync(data),
};

export const xzFormat: WritableFormat = {
  name: 'xz',
  magic: [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  decompress: (data) => lzma().xz.decompressSync(data),
  compress: (data) => lzma().xz.compressSync(data),
  package: '@napi-rs/lzma',
};

export const snappy: WritableFormat = {
  name: 'snappy',
  magic: [[...SNAPPY_STREAM_IDENTIFIER]],
  decompress: decompressSnappyFramed,
  compress: compressSnappyFramed,
  package: 'snappy',
};

export const lz4: WritableFormat = {
  name: 'lz4',
  magic: [[0x04, 0x22, 0x4d, 0x18]],
  decompress: (data) => lz4Frames().decompressFrameSync(data),
  compress: (data) => lz4Frames().compressFrameSync(data),
  package: 'lz4-napi',
};

/**
 * The largest window a zstd frame may need, 128 MiB: libzstd's own default
 * (ZSTD_WINDOWLOG_LIMIT_DEFAULT = 27), set here so that it does not move
 * with the libzstd a Node release bundles. A frame written with a larger
 * window (`zstd --long=28` and up) is refused rather than decoded.
 */
export const ZSTD_MAX_WINDOW_LOG = 27;

const ZSTD_DECOMPRESS_OPTIONS: zlib.ZstdOptions = { params: { [zlib.constants.ZSTD_d_windowLogMax]: ZSTD_MAX_WINDOW_LOG } };

/**
 * zstd through Node's zlib (libzstd). libzstd checks what eddy used to check
 * by hand when it decoded with fzstd, which allocated its output from the
 * content size a frame header declares: a frame declaring more content than
 * its blocks hold is "Data corruption detected", and the output grows with
 * what the blocks decode to, never from a declared size. Like gzip and
 * zlib, the output is otherwise bounded only by Node's largest Buffer.
 */
export const zstd: WritableFormat = {
  name: 'zstd',
  magic: [[0x28, 0xb5, 0x2f, 0xfd]],
  decompress: (data) => {
    try {
      return zlib.zstdDecompressSync(data, ZSTD_DECOMPRESS_OPTIONS);
    } catch (error) {
      // libzstd's own words ("Frame requires too much memory for decoding") do not say which limit, or that it is ours
      if ((error as NodeJS.ErrnoException).code === 'ZSTD_error_frameParameter_windowTooLarge') {
        throw new Error(`a frame needs a window larger than ${2 ** ZSTD_MAX_WINDOW_LOG} bytes, the most eddy decodes with (libzstd's default limit)`);
      }
      throw error;
    }
  },
  compress: (data) => zlib.zstdCompressSync(data),
};

/** The formats `decompress` recognises, in the order their magic is tried. */
export const detectableFormats: readonly CompressionFormat[] = [gzip, zlibFormat, xzFormat, snappy, lz4, zstd];

export function detectFormat(data: Buffer): CompressionFormat | undefined {
  return detectableFormats.find((format) => format.magic.some((magic) => startsWith(data, magic)));
}

function startsWith(data: Buffer, magic: readonly number[]): boolean {
  if (data.length < magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (data[i] !== magic[i]) return false;
  return true;
}

/** Runs a (de)compression step, naming the processor in the error. */
export function attempt(processor: string, step: (data: Buffer) => Buffer, data: Buffer): Buffer {
  try {
    return step(data);
  } catch (error) {
    throw new Error(`${processor}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
