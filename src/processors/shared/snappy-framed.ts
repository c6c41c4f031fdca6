import type * as Snappy from 'snappy';
import { lazyPackage } from '../../core/packages';
import { maskedCrc32c } from './crc32c';

/**
 * The snappy framing format (framing_format.txt of google/snappy): a stream
 * identifier chunk, then chunks of at most 64 KiB of data, each compressed
 * (or stored when compression does not pay) with a masked CRC-32C of the data.
 * The `snappy` package compresses the blocks; the framing is this file, so
 * it can run synchronously inside a processor.
 */
export const SNAPPY_STREAM_IDENTIFIER = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]);

const snappyBlocks = lazyPackage<typeof Snappy>('snappy', 'snappy compression');

const MAX_BLOCK = 65536;
/** The chunk type byte. Plain numbers, not an enum: the decoder compares a byte off the wire with them. */
const ChunkType = { Compressed: 0x00, Uncompressed: 0x01, Padding: 0xfe, StreamIdentifier: 0xff } as const;

export function compressSnappyFramed(data: Buffer): Buffer {
  const parts: Buffer[] = [SNAPPY_STREAM_IDENTIFIER];
  for (let offset = 0; offset < data.length; offset += MAX_BLOCK) {
    const block = data.subarray(offset, offset + MAX_BLOCK);
    const compressed = snappyBlocks().compressSync(block);
    // store the block as is when compressing it would not save at least 1/8th, as the reference encoder does
    const useCompressed = compressed.length < block.length - (block.length >> 3);
    const body = useCompressed ? compressed : block;
    const header = Buffer.alloc(8);
    header[0] = useCompressed ? ChunkType.Compressed : ChunkType.Uncompressed;
    header.writeUIntLE(body.length + 4, 1, 3);
    header.writeUInt32LE(maskedCrc32c(block), 4);
    parts.push(header, body);
  }
  return Buffer.concat(parts);
}

export function decompressSnappyFramed(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let pos = 0;
  let seenIdentifier = false;
  while (pos < data.length) {
    if (pos + 4 > data.length) throw new Error('snappy: truncated chunk header');
    // a byte off the wire: one of ChunkType, or another judged below
    const byte = data[pos];
    const length = data.readUIntLE(pos + 1, 3);
    const body = data.subarray(pos + 4, pos + 4 + length);
    if (body.length !== length) throw new Error('snappy: truncated chunk');
    pos += 4 + length;
    if (byte === ChunkType.StreamIdentifier) {
      if (!body.equals(SNAPPY_STREAM_IDENTIFIER.subarray(4))) throw new Error('snappy: bad stream identifier');
      seenIdentifier = true;
      continue;
    }
    if (!seenIdentifier) throw new Error('snappy: data does not start with the stream identifier');
    if (byte === ChunkType.Compressed || byte === ChunkType.Uncompressed) {
      if (length < 4) throw new Error('snappy: chunk too short for its checksum');
      const block = byte === ChunkType.Compressed ? (snappyBlocks().uncompressSync(body.subarray(4)) as Buffer) : body.subarray(4);
      if (block.length > MAX_BLOCK) throw new Error('snappy: chunk holds more than 64 KiB');
      if (maskedCrc32c(block) !== body.readUInt32LE(0)) throw new Error('snappy: checksum mismatch');
      out.push(block);
    } else if (byte >= 0x02 && byte <= 0x7f) {
      throw new Error(`snappy: reserved unskippable chunk type 0x${byte.toString(16)}`);
    } // 0x80-0xfd skippable and 0xfe padding are skipped
  }
  if (!seenIdentifier) throw new Error('snappy: empty input');
  return Buffer.concat(out);
}
