/**
 * The Confluent wire format: a magic byte 0, the schema id as a 4-byte
 * big-endian integer, then the encoded value (for protobuf, the message
 * indexes come first; see protobuf.ts).
 */
export const MAGIC = 0;
export const HEADER_LENGTH = 5;

/** The schema id of a frame in the wire format; throws naming what is wrong. */
export function schemaIdOf(frame: Buffer, codec: string): number {
  if (frame.length < HEADER_LENGTH) throw new Error(`${codec}: frame of ${frame.length} bytes is shorter than the 5-byte schema registry header`);
  if (frame[0] !== MAGIC) throw new Error(`${codec}: first byte is ${frame[0]}, not the schema registry magic byte 0`);
  return frame.readUInt32BE(1);
}

/** The header for schema `id`. */
export function header(id: number): Buffer {
  const out = Buffer.allocUnsafe(HEADER_LENGTH);
  out[0] = MAGIC;
  out.writeUInt32BE(id, 1);
  return out;
}
