/**
 * A minimal PNG encoder: 8-bit RGB, no interlace, every scanline with
 * filter 0 (none), the image data compressed with node:zlib. Enough for a
 * line plot, with no dependency.
 *
 * File layout (PNG specification, ISO/IEC 15948): the 8-byte signature,
 * then chunks, each `length (4 bytes, big-endian) | type (4 ASCII) | data |
 * CRC-32 of type and data`: IHDR, one IDAT, IEND.
 */
import { deflateSync } from 'node:zlib';

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The CRC-32 table of the reflected polynomial 0xEDB88320 (the one PNG and zlib use). */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 of `bytes`; pass a previous result as `crc` to continue over several buffers. */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = (crc ^ 0xffffffff) >>> 0;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(data, crc32(head.subarray(4, 8))), 0);
  return Buffer.concat([head, data, tail]);
}

/** A PNG file of an RGB image: `rgb` holds `width * height` pixels, 3 bytes each, row by row from the top. */
export function encodePng(width: number, height: number, rgb: Uint8Array): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) throw new Error(`encodePng: bad size ${width}x${height}`);
  if (rgb.length !== width * height * 3) throw new Error(`encodePng: ${rgb.length} bytes of pixels for ${width}x${height} RGB (needs ${width * height * 3})`);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per sample
  header[9] = 2; // colour type: RGB
  header[10] = 0; // compression: deflate
  header[11] = 0; // filter method 0
  header[12] = 0; // no interlace
  const stride = width * 3;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0; // filter type of the scanline: none
    raw.set(rgb.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  }
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}
