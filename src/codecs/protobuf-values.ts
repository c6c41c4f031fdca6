import * as protobuf from 'protobufjs';
import { integerValue } from './integers';

/**
 * Between protobufjs messages and eddy values, field by field from the
 * message's reflection (see docs/codecs/protobuf.md for the mapping).
 */

const LONG = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const UNSIGNED = new Set(['uint64', 'fixed64', 'uint32', 'fixed32']);
const INT32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32 = new Set(['uint32', 'fixed32']);
/** protobufjs's Long class (long.js), typed as far as this file uses it */
const Long = protobuf.util.Long as unknown as { fromString(text: string, unsigned: boolean): protobuf.Long };
const RANGE64 = { signed: [-(2n ** 63n), 2n ** 63n - 1n], unsigned: [0n, 2n ** 64n - 1n] } as const;

/** A decoded message as an eddy value: plain objects, int64 as number or BigInt, enums by name, bytes as Buffer. */
export function toValue(type: protobuf.Type, message: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const present = Object.prototype.hasOwnProperty.call(message, field.name);
    // explicit presence (proto2, proto3 `optional`, oneof members, messages): absent stays absent; otherwise the default
    if (!present && (field.partOf !== null || field.resolvedType instanceof protobuf.Type || field.options?.proto3_optional || field.repeated || field.map)) {
      if (field.repeated) out[field.name] = [];
      else if (field.map) out[field.name] = {};
      continue;
    }
    const raw = message[field.name];
    if (field.map) {
      const map: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(raw as Record<string, unknown>)) map[key] = scalarOut(field, value);
      out[field.name] = map;
    } else if (field.repeated) {
      out[field.name] = (raw as unknown[]).map((value) => scalarOut(field, value));
    } else {
      out[field.name] = scalarOut(field, raw);
    }
  }
  return out;
}

function scalarOut(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return toValue(resolved, value as Record<string, unknown>);
  if (resolved instanceof protobuf.Enum) return resolved.valuesById[value as number] ?? value;
  if (LONG.has(field.type)) return longOut(value, UNSIGNED.has(field.type));
  // an absent bytes field reads protobufjs's default, an empty array
  if (field.type === 'bytes' && !Buffer.isBuffer(value)) return Buffer.from(value as Uint8Array);
  return value;
}

function longOut(value: unknown, unsigned: boolean): number | bigint {
  if (typeof value === 'number') return value;
  const { low, high } = value as protobuf.Long;
  const top = unsigned ? high >>> 0 : high;
  // below 2^53 in magnitude the two words make an exact number
  if (top >= -0x200000 && top < 0x200000) return top * 4294967296 + (low >>> 0);
  return integerValue((BigInt(top) << 32n) + BigInt(low >>> 0));
}

/**
 * An eddy value as a message protobufjs can encode: each field checked
 * against its declared type (a wrong type, an out-of-range integer, an
 * unknown enum name or field is an error naming the field's path).
 */
export function fromValue(type: protobuf.Type, value: unknown, path = ''): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value)) {
    throw new Error(`${path || '(top level)'}: expected an object for message ${type.fullName.slice(1)}, got ${describe(value)}`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // a key of the value: not every one names a field
    const field = type.fields[key] as protobuf.Field | undefined;
    const where = path ? `${path}.${key}` : key;
    if (!field) throw new Error(`${where}: no such field in message ${type.fullName.slice(1)}`);
    if (item === null || item === undefined) continue;
    if (field.map) {
      if (typeof item !== 'object' || Array.isArray(item)) throw new Error(`${where}: expected an object (a map), got ${describe(item)}`);
      const map: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(item as Record<string, unknown>)) map[k] = scalarIn(field, v, `${where}.${k}`);
      out[key] = map;
    } else if (field.repeated) {
      if (!Array.isArray(item)) throw new Error(`${where}: expected an array, got ${describe(item)}`);
      out[key] = item.map((v, i) => scalarIn(field, v, `${where}[${i}]`));
    } else {
      out[key] = scalarIn(field, item, where);
    }
  }
  return out;
}

function scalarIn(field: protobuf.Field, value: unknown, where: string): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return fromValue(resolved, value, where);
  if (resolved instanceof protobuf.Enum) {
    if (typeof value === 'string' && value in resolved.values) return resolved.values[value];
    // enums are open (proto3): a number the schema does not name decodes as itself and encodes back
    if (typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31) return value;
    throw new Error(`${where}: ${describe(value)} is not a value of enum ${resolved.fullName.slice(1)} (${Object.keys(resolved.values).join(', ')})`);
  }
  const type = field.type;
  if (LONG.has(type)) return longIn(value, UNSIGNED.has(type), where);
  if (INT32.has(type) || UINT32.has(type)) {
    const [min, max] = UINT32.has(type) ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
      throw new Error(`${where}: expected a ${type} integer, got ${describe(value)}`);
    return value;
  }
  switch (type) {
    case 'double':
    case 'float':
      if (typeof value !== 'number') throw new Error(`${where}: expected a number, got ${describe(value)}`);
      return value;
    case 'bool':
      if (typeof value !== 'boolean') throw new Error(`${where}: expected a boolean, got ${describe(value)}`);
      return value;
    case 'string':
      if (typeof value !== 'string') throw new Error(`${where}: expected a string, got ${describe(value)}`);
      return value;
    case 'bytes':
      if (value instanceof Uint8Array) return value;
      if (typeof value === 'string') return Buffer.from(value, 'base64');
      throw new Error(`${where}: expected bytes (binary, or a base64 string), got ${describe(value)}`);
    default:
      throw new Error(`${where}: field type ${type} is not known`);
  }
}

function longIn(value: unknown, unsigned: boolean, where: string): protobuf.Long {
  let big: bigint;
  if (typeof value === 'bigint') big = value;
  else if (typeof value === 'number' && Number.isInteger(value)) big = BigInt(value);
  else if (typeof value === 'string' && /^-?\d+$/.test(value)) big = BigInt(value);
  else throw new Error(`${where}: expected an integer, got ${describe(value)}`);
  const [min, max] = unsigned ? RANGE64.unsigned : RANGE64.signed;
  if (big < min || big > max) throw new Error(`${where}: ${big} is out of range for ${unsigned ? 'an unsigned' : 'a signed'} 64-bit integer`);
  return Long.fromString(big.toString(), unsigned);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'bigint') return `${value}`;
  if (Buffer.isBuffer(value)) return `${value.length} bytes`;
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}
