/** CRC-32C (Castagnoli), which the snappy framing format checksums with. */
const TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

export function crc32c(data: Uint8Array): number {
  let crc = -1;
  for (const byte of data) crc = TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** The framing format stores a masked CRC, so that a CRC of data holding CRCs stays well distributed. */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c(data);
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;
}
