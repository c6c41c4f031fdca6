/**
 * A look at zstd frame headers before fzstd decodes them. fzstd allocates
 * its output from the sizes a frame header declares, without checking them
 * against the data: a 26-byte frame declaring 1 GiB of content came back as
 * a 1 GiB buffer of zeros. So each frame (RFC 8878, section 3.1.1) is walked
 * first, reading only headers, and refused when:
 *
 * - its window is larger than 128 MiB, the limit libzstd's decoder applies
 *   by default (ZSTD_WINDOWLOG_LIMIT_DEFAULT = 27), or
 * - it declares more content than its blocks can hold: a raw or RLE block
 *   holds exactly its stated size, a compressed block at most 128 KiB (and
 *   no more than the window).
 *
 * Anything else malformed is left for fzstd to report.
 */
export const ZSTD_MAX_WINDOW = 2 ** 27;

const FRAME_MAGIC = 0xfd2fb528;
const MAX_BLOCK = 128 * 1024;
const DICTIONARY_ID_BYTES = [0, 1, 2, 4];

export function checkZstdFrames(data: Buffer): void {
  let pos = 0;
  while (pos + 4 <= data.length) {
    const magic = data.readUInt32LE(pos);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // a skippable frame: its 4-byte size, then that many bytes
      if (pos + 8 > data.length) return;
      pos += 8 + data.readUInt32LE(pos + 4);
      continue;
    }
    if (magic !== FRAME_MAGIC) return;
    const end = checkFrame(data, pos);
    if (end === undefined) return;
    pos = end;
  }
}

/** Checks the frame at `pos` and returns where the next one starts, or undefined when it is cut short. */
function checkFrame(data: Buffer, pos: number): number | undefined {
  if (pos + 5 > data.length) return undefined;
  const descriptor = data[pos + 4];
  const contentSizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const hasChecksum = (descriptor >> 2) & 1;
  let at = pos + 5;
  let window: number | undefined;
  if (!singleSegment) {
    if (at >= data.length) return undefined;
    const exponent = 10 + (data[at] >> 3);
    window = 2 ** exponent + (2 ** exponent / 8) * (data[at] & 7);
    at++;
  }
  at += DICTIONARY_ID_BYTES[descriptor & 3];
  const sizeBytes = contentSizeFlag > 0 ? 1 << contentSizeFlag : singleSegment;
  if (at + sizeBytes > data.length) return undefined;
  let declared: number | undefined;
  if (sizeBytes > 0) {
    declared = data.readUIntLE(at, Math.min(sizeBytes, 6)) + (sizeBytes === 8 ? data.readUInt16LE(at + 6) * 2 ** 48 : 0);
    if (sizeBytes === 2) declared += 256;
  }
  at += sizeBytes;
  window ??= declared ?? 0; // a single-segment frame's window is its content size
  if (window > ZSTD_MAX_WINDOW) {
    throw new Error(`zstd: a frame needs a ${window}-byte window, more than the ${ZSTD_MAX_WINDOW} bytes eddy decodes with (libzstd's default limit)`);
  }
  let capacity = 0;
  for (;;) {
    if (at + 3 > data.length) return undefined;
    const header = data.readUIntLE(at, 3);
    const last = header & 1;
    const type = (header >> 1) & 3;
    const size = header >> 3;
    if (type === 3) return undefined; // reserved: fzstd reports it
    capacity += type === 2 ? Math.min(MAX_BLOCK, window) : size;
    at += 3 + (type === 1 ? 1 : size);
    if (last) break;
  }
  if (declared !== undefined && declared > capacity) {
    throw new Error(`zstd: a frame declares ${declared} bytes of content, more than its blocks can hold (${capacity})`);
  }
  return at + (hasChecksum ? 4 : 0);
}
