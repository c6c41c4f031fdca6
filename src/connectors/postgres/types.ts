/**
 * The mapping between PostgreSQL values and eddy values, both ways, for the
 * postgres onramp (rows read) and offramp (rows inserted). A column is a
 * field record `{fieldType, name, value}`; the table in
 * docs/connectors/postgres.md is the contract, this file its code.
 *
 * Reading: every column is fetched in PostgreSQL's text form (session
 * TimeZone UTC, DateStyle ISO, bytea_output hex, see `SESSION_OPTIONS`) and
 * converted here, so the result never depends on pg's global type parsers.
 *
 * Writing: every value is sent as an untyped parameter (text, or binary for
 * bytes), so the server converts it to the column's own type (INSERT infers
 * parameter types from the target columns). `fieldType` says how to turn the
 * eddy value into that text: a JSON column gets the value serialised as
 * JSON, a TIMESTAMPTZ column an integer as nanoseconds since the epoch.
 */
import { compactJson } from '../../codecs/json/compact';
import { hasLongDigitRun } from '../../codecs/json';
import { parsePrecise } from '../../codecs/json/precise-parse';

/** Session settings that make the text forms above fixed, whatever the server's defaults. */
export const SESSION_OPTIONS = '-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=postgres -c bytea_output=hex -c extra_float_digits=3';

/** A column of a row: the spec's field record. */
export interface FieldRecord {
  fieldType: string;
  name: string;
  value: unknown;
}

/** Type OIDs of the builtin types (fixed in pg_type.dat), by the name eddy uses as `fieldType`. */
export const BUILTIN_OIDS: Readonly<Record<number, string>> = {
  16: 'BOOL',
  17: 'BYTEA',
  18: 'CHAR',
  19: 'NAME',
  20: 'INT8',
  21: 'INT2',
  23: 'INT4',
  25: 'TEXT',
  26: 'OID',
  114: 'JSON',
  700: 'FLOAT4',
  701: 'FLOAT8',
  1042: 'BPCHAR',
  1043: 'VARCHAR',
  1082: 'DATE',
  1083: 'TIME',
  1114: 'TIMESTAMP',
  1184: 'TIMESTAMPTZ',
  1186: 'INTERVAL',
  1266: 'TIMETZ',
  1700: 'NUMERIC',
  2950: 'UUID',
  3802: 'JSONB',
};

/** SQL spellings users write as `fieldType`, by the name above. */
const ALIASES: Readonly<Record<string, string>> = {
  BOOLEAN: 'BOOL',
  SMALLINT: 'INT2',
  INTEGER: 'INT4',
  INT: 'INT4',
  BIGINT: 'INT8',
  REAL: 'FLOAT4',
  'DOUBLE PRECISION': 'FLOAT8',
  FLOAT: 'FLOAT8',
  DECIMAL: 'NUMERIC',
  'CHARACTER VARYING': 'VARCHAR',
  CHARACTER: 'BPCHAR',
  'TIMESTAMP WITH TIME ZONE': 'TIMESTAMPTZ',
  'TIMESTAMP WITHOUT TIME ZONE': 'TIMESTAMP',
};

/** `fieldType` as eddy names it: upper case, SQL aliases resolved (`integer` is INT4). */
export function canonicalType(fieldType: string): string {
  const upper = fieldType.trim().toUpperCase().replace(/\s+/g, ' ');
  return ALIASES[upper] ?? upper;
}

// ---- reading: PostgreSQL text form -> eddy value ----

const TIMESTAMP_TEXT = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)(\+00)?$/;

/**
 * An eddy value from a column's text form. Integers beyond 2^53 (INT8) are
 * BigInt, NUMERIC stays a string (exact), JSON is parsed with eddy's json
 * codec rules (big integers as BigInt), BYTEA is a Buffer, timestamps are
 * ISO 8601 strings (`…Z` for TIMESTAMPTZ). Other types keep their text form.
 */
export function fromText(fieldType: string, text: string): unknown {
  switch (fieldType) {
    case 'BOOL':
      return text === 't';
    case 'INT2':
    case 'INT4':
    case 'OID':
      return Number(text);
    case 'INT8': {
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : BigInt(text);
    }
    case 'FLOAT4':
    case 'FLOAT8':
      return Number(text); // 'NaN', 'Infinity' and '-Infinity' included
    case 'JSON':
    case 'JSONB':
      return hasLongDigitRun(text) ? parsePrecise(text) : JSON.parse(text);
    case 'BYTEA':
      return Buffer.from(text.slice(2), 'hex'); // bytea_output=hex: '\x0001ff'
    case 'TIMESTAMPTZ':
    case 'TIMESTAMP': {
      // ISO 8601 with the session in UTC; 'infinity' and BC dates keep their text form
      const m = TIMESTAMP_TEXT.exec(text);
      if (!m) return text;
      return `${m[1]}T${m[2]}${m[3] ? 'Z' : ''}`;
    }
    default:
      return text; // NUMERIC, text types, DATE, UUID, TIME, INTERVAL, arrays, enums, …: the text form
  }
}

// ---- writing: eddy value -> parameter ----

/** A bound parameter: text (the server parses it as the column's type), bytes, or NULL. */
export type Param = string | Buffer | null;

/**
 * The parameter for one field record's value. Throws (naming nothing: the
 * caller adds the column) when the value cannot be one of `fieldType`.
 */
export function toParam(fieldType: string, value: unknown): Param {
  if (value === null || value === undefined) return null;
  switch (fieldType) {
    case 'JSON':
    case 'JSONB':
      return compactJson(value); // the value itself; a string becomes a JSON string
    case 'BYTEA':
      if (Buffer.isBuffer(value)) return value;
      if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      if (typeof value === 'string') return base64(value); // how eddy's json codec writes bytes
      throw new Error(`a BYTEA value must be bytes or a base64 string, not ${kind(value)}`);
    case 'TIMESTAMPTZ':
    case 'TIMESTAMP':
    case 'DATE':
      if (typeof value === 'string') return value;
      if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) {
        const iso = isoFromNs(BigInt(value));
        return fieldType === 'DATE' ? iso.slice(0, 10) : fieldType === 'TIMESTAMP' ? iso.slice(0, -1) : iso;
      }
      throw new Error(`a ${fieldType} value must be a string or an integer of nanoseconds since the epoch, not ${kind(value)}`);
    default:
      return scalar(value);
  }
}

/** Any other type: strings as they are, numbers and booleans in their usual text, bytes as bytes, structures as JSON. */
function scalar(value: unknown): Param {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      if (Buffer.isBuffer(value)) return value;
      return compactJson(value);
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function base64(text: string): Buffer {
  if (text.length % 4 !== 0 || !BASE64.test(text)) throw new Error('a BYTEA string must be base64 (as the json codec writes bytes)');
  return Buffer.from(text, 'base64');
}

/** Nanoseconds since the epoch as an ISO 8601 UTC timestamp with microseconds (PostgreSQL's precision). */
export function isoFromNs(ns: bigint): string {
  let micros = ns / 1000n;
  if (ns < 0n && ns % 1000n !== 0n) micros -= 1n; // floor, not towards zero
  let millis = micros / 1000n;
  let sub = micros % 1000n;
  if (sub < 0n) {
    sub += 1000n;
    millis -= 1n;
  }
  const iso = new Date(Number(millis)).toISOString(); // 2024-01-02T03:04:05.123Z
  return `${iso.slice(0, -1)}${sub.toString().padStart(3, '0')}Z`;
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
