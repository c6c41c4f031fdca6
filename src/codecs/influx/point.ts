/**
 * The value both influx codecs decode to and encode from:
 * `{measurement, tags, fields, timestamp}`.
 *
 * Field types are carried by JavaScript types so a point survives decode then
 * encode with every field's influx type unchanged:
 *   float    <-> number   (`5` in line protocol is a float, as in InfluxDB)
 *   integer  <-> bigint   (`5i`; always a BigInt, even when small)
 *   unsigned  -> bigint   (`5u`; written back as `5u` only above the i64 range,
 *                          as `5i` otherwise: the one type the model cannot keep)
 *   string   <-> string, boolean <-> boolean
 * The timestamp is a BigInt of nanoseconds (they pass 2^53).
 *
 * Integers, exactly: `i` fields hold -2^63 to 2^63 - 1 and `u` fields 0 to
 * 2^64 - 1, as BigInt whatever their size; a literal outside its range is a
 * decode error. A BigInt field encodes with `i` within the i64 range, with
 * `u` above it up to 2^64 - 1, and beyond that is an encode error. A number
 * field is a float: a float literal beyond 2^53 rounds to the nearest
 * double, and an integral double encodes as its shortest text, which reads
 * back as the same double. Timestamps: line protocol holds -2^63 to
 * 2^63 - 1 (beyond: an error both ways); binflux holds 0 to 2^64 - 1. A
 * number timestamp must be a safe integer.
 */
import { setOwn } from '../integers';

export type FieldValue = number | bigint | string | boolean;

export interface InfluxPoint {
  measurement: string;
  tags: Record<string, string>;
  fields: Record<string, FieldValue>;
  timestamp?: bigint;
}

export const I64_MIN = -(2n ** 63n);
export const I64_MAX = 2n ** 63n - 1n;
export const U64_MAX = 2n ** 64n - 1n;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

/**
 * Reads an event value as a point for encoding, or throws saying what is wrong.
 * Tags that are numbers, bigints or booleans are written as their text; null
 * or missing tags and fields are left out (influx has no null).
 */
export function toPoint(value: unknown, codec: string): InfluxPoint {
  if (!isRecord(value)) throw new Error(`${codec}: expected an object with measurement, tags, fields and timestamp`);
  const { measurement, tags = {}, fields, timestamp } = value;
  if (typeof measurement !== 'string' || measurement === '') throw new Error(`${codec}: measurement must be a non-empty string`);
  if (!isRecord(tags)) throw new Error(`${codec}: tags must be an object`);
  if (!isRecord(fields)) throw new Error(`${codec}: fields must be an object`);
  const point: InfluxPoint = { measurement, tags: {}, fields: {} };
  for (const [key, tag] of Object.entries(tags)) {
    if (tag === null || tag === undefined) continue;
    if (typeof tag === 'string') setOwn(point.tags, key, tag);
    else if (typeof tag === 'number' || typeof tag === 'bigint' || typeof tag === 'boolean') setOwn(point.tags, key, String(tag));
    else throw new Error(`${codec}: tag ${JSON.stringify(key)} must be a string`);
  }
  for (const [key, field] of Object.entries(fields)) {
    if (field === null || field === undefined) continue;
    if (typeof field === 'number') {
      if (!Number.isFinite(field)) throw new Error(`${codec}: field ${JSON.stringify(key)} is ${field}, which influx cannot store`);
    } else if (typeof field === 'bigint') {
      if (field < I64_MIN || field > U64_MAX) throw new Error(`${codec}: integer field ${JSON.stringify(key)} is outside the 64-bit range`);
    } else if (typeof field !== 'string' && typeof field !== 'boolean') {
      throw new Error(`${codec}: field ${JSON.stringify(key)} must be a number, bigint, string or boolean`);
    }
    setOwn(point.fields, key, field);
  }
  if (Object.keys(point.fields).length === 0) throw new Error(`${codec}: a point needs at least one field`);
  if (timestamp !== undefined && timestamp !== null) point.timestamp = toTimestamp(timestamp, codec);
  return point;
}

function toTimestamp(value: unknown, codec: string): bigint {
  const ns = typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof ns === 'bigint' && ns >= I64_MIN && ns <= U64_MAX) return ns;
  throw new Error(`${codec}: timestamp must be an integer (nanoseconds)`);
}
