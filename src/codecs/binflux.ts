import type { CodecType } from './codec';
import { setOwn } from './integers';
import { I64_MAX, I64_MIN, U64_MAX, toPoint, type FieldValue, type InfluxPoint } from './influx/point';

/**
 * binflux: the original runtime's binary influx format, all big-endian:
 *   u16 version (0) | u16 length + measurement | u64 timestamp
 *   | u16 tag count, each u16 length + key, u16 length + value
 *   | u16 field count, each u16 length + key, u8 type, value
 * Field types: 0 i64, 1 f64, 2 string (u16 length + bytes), 3 true, 4 false.
 * Same value model as influx (integers as BigInt, floats as number); an
 * unsigned integer above the i64 range cannot be written. Encoding needs a
 * timestamp.
 *
 * Integers, exactly: integer fields are i64, -2^63 to 2^63 - 1 as BigInt
 * both ways; a BigInt outside (2^64 - 1 included) is an encode error, not a
 * wrap. The timestamp is a u64, 0 to 2^64 - 1; a negative one is an encode
 * error.
 */
export const binflux: CodecType = {
  name: 'binflux',
  summary: "The original runtime's binary influx format: one point per frame, integers as BigInt, big-endian.",
  create: () => ({
    name: 'binflux',
    decode: (data) => decodeBinflux(data),
    encode: (value) => encodeBinflux(toPoint(value, 'binflux')),
  }),
};

const VERSION = 0;
/** The byte before each field value. Plain numbers, not an enum: the decoder compares a byte off the wire with them. */
const FieldType = { I64: 0, F64: 1, String: 2, True: 3, False: 4 } as const;

function decodeBinflux(data: Buffer): InfluxPoint {
  let pos = 0;
  const need = (n: number) => {
    if (pos + n > data.length) throw new Error(`binflux: truncated at byte ${pos}`);
  };
  const u16 = () => (need(2), (pos += 2), data.readUInt16BE(pos - 2));
  const text = () => {
    const length = u16();
    need(length);
    pos += length;
    return data.toString('utf8', pos - length, pos);
  };
  const version = u16();
  if (version !== VERSION) throw new Error(`binflux: unknown version ${version}`);
  const measurement = text();
  need(8);
  const timestamp = data.readBigUInt64BE(pos);
  pos += 8;
  const tags: Record<string, string> = {};
  for (let count = u16(); count > 0; count--) {
    const key = text();
    setOwn(tags, key, text());
  }
  const fields: Record<string, FieldValue> = {};
  for (let count = u16(); count > 0; count--) {
    const key = text();
    need(1);
    // a byte off the wire: an unknown one is the default's error
    const type = data[pos++];
    switch (type) {
      case FieldType.I64:
        need(8);
        setOwn(fields, key, data.readBigInt64BE(pos));
        pos += 8;
        break;
      case FieldType.F64:
        need(8);
        setOwn(fields, key, data.readDoubleBE(pos));
        pos += 8;
        break;
      case FieldType.String:
        setOwn(fields, key, text());
        break;
      case FieldType.True:
        setOwn(fields, key, true);
        break;
      case FieldType.False:
        setOwn(fields, key, false);
        break;
      default:
        throw new Error(`binflux: unknown field type ${data[pos - 1]} at byte ${pos - 1}`);
    }
  }
  if (pos !== data.length) throw new Error(`binflux: ${data.length - pos} bytes after the point`);
  return { measurement, tags, fields, timestamp };
}

function encodeBinflux(point: InfluxPoint): Buffer {
  const { timestamp } = point;
  if (timestamp === undefined || timestamp < 0n || timestamp > U64_MAX) throw new Error('binflux: needs a timestamp (u64 nanoseconds)');
  const parts: Buffer[] = [u16(VERSION), text(point.measurement), u64(timestamp)];
  const tags = Object.entries(point.tags);
  parts.push(u16(tags.length));
  for (const [key, value] of tags) parts.push(text(key), text(value));
  const fields = Object.entries(point.fields);
  parts.push(u16(fields.length));
  for (const [key, value] of fields) parts.push(text(key), field(key, value));
  return Buffer.concat(parts);
}

function field(key: string, value: FieldValue): Buffer {
  switch (typeof value) {
    case 'bigint': {
      if (value < I64_MIN || value > I64_MAX) throw new Error(`binflux: integer field ${JSON.stringify(key)} is outside the i64 range`);
      const buf = Buffer.alloc(9);
      buf[0] = FieldType.I64;
      buf.writeBigInt64BE(value, 1);
      return buf;
    }
    case 'number': {
      const buf = Buffer.alloc(9);
      buf[0] = FieldType.F64;
      buf.writeDoubleBE(value, 1);
      return buf;
    }
    case 'string':
      return Buffer.concat([Buffer.of(FieldType.String), text(value)]);
    case 'boolean':
      return Buffer.of(value ? FieldType.True : FieldType.False);
  }
}

function u16(n: number): Buffer {
  const buf = Buffer.alloc(2);
  buf.writeUInt16BE(n);
  return buf;
}

function u64(n: bigint): Buffer {
  const buf = Buffer.alloc(8);
  buf.writeBigUInt64BE(n);
  return buf;
}

function text(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > 0xffff) throw new Error('binflux: a string longer than 65535 bytes cannot be written');
  return Buffer.concat([u16(bytes.length), bytes]);
}
