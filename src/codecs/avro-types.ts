import * as avsc from 'avsc';
import { integerValue, setOwn } from './integers';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** below this magnitude a zigzag value stays under 2^53, so number arithmetic is exact */
const NUMBER_SAFE = 2 ** 51;

/**
 * Avro `long` in eddy's value model: a number within ±2^53, a BigInt beyond,
 * every int64 exact (avsc's own long refuses values beyond 2^53). avsc hands
 * over the raw zigzag varint bytes (`noUnpack`), read and written here.
 */
export const exactLong = avsc.types.LongType.__with(
  {
    fromBuffer: readZigzag,
    toBuffer: writeZigzag,
    fromJSON: (value: number | bigint) => (typeof value === 'bigint' ? integerValue(value) : value),
    toJSON: (value: number | bigint) => value,
    isValid: isInt64,
    compare: (a: number | bigint, b: number | bigint) => (a < b ? -1 : a > b ? 1 : 0),
  },
  true,
);

function isInt64(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63;
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX;
}

function readZigzag(bytes: Buffer): number | bigint {
  if (bytes.length <= 7) {
    // at most 49 bits: exact as a number
    let n = 0;
    for (let i = bytes.length - 1; i >= 0; i--) n = n * 128 + (bytes[i] & 0x7f);
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 7n) | BigInt(bytes[i] & 0x7f);
  // an overlong varint: more bits than a long has
  if (n >= 2n ** 64n) throw new Error('long varint beyond 64 bits');
  return integerValue((n >> 1n) ^ -(n & 1n));
}

function writeZigzag(value: number | bigint): Buffer {
  const out: number[] = [];
  if (typeof value === 'number' && Math.abs(value) < NUMBER_SAFE) {
    let n = value >= 0 ? value * 2 : -value * 2 - 1;
    while (n >= 128) {
      out.push((n % 128) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
    return Buffer.from(out);
  }
  const big = BigInt(value);
  let n = BigInt.asUintN(64, (big << 1n) ^ (big >> 63n));
  while (n >= 128n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
  return Buffer.from(out);
}

/** Avro `int`: avsc reads an overlong varint into a value beyond 32 bits; that is an error here, as it is on encode. */
class CheckedIntType extends avsc.types.IntType {
  _read(tap: Tap): number {
    const n = tap.readInt();
    if (n !== (n | 0)) throw new Error(`int ${n} is beyond 32 bits`);
    return n;
  }
}

export const checkedInt = new CheckedIntType();

/**
 * Avro `decimal` (on bytes or fixed) as a string holding the exact decimal:
 * `"-12.30"` for unscaled -1230 at scale 2, always with `scale` fraction
 * digits. Encoding takes such a string (fewer fraction digits are padded;
 * more are an error, not a rounding), a number (through its shortest
 * decimal text) or a BigInt (an integer); more than `precision` digits is an
 * error.
 */
export class DecimalType extends avsc.types.LogicalType {
  private readonly precision: number;
  private readonly scale: number;

  constructor(schema: avsc.Schema, opts?: unknown) {
    super(schema, opts);
    const { precision, scale = 0 } = schema as { precision?: number; scale?: number };
    if (precision === undefined || !Number.isInteger(precision) || precision < 1) throw new Error('decimal: precision must be a positive integer');
    if (!Number.isInteger(scale) || scale < 0 || scale > precision) throw new Error('decimal: scale must be an integer from 0 to precision');
    this.precision = precision;
    this.scale = scale;
  }

  protected override _fromValue(bytes: Buffer | undefined): string | undefined {
    // past the end of a truncated frame: avsc reports it once the read returns
    if (bytes === undefined) return undefined;
    if (bytes.length === 0) return this.text(0n);
    let n = 0n;
    for (const byte of bytes) n = (n << 8n) | BigInt(byte);
    if (bytes[0] & 0x80) n -= 1n << BigInt(bytes.length * 8);
    return this.text(n);
  }

  protected override _toValue(value: unknown): Buffer {
    const unscaled = this.unscaled(value);
    const digits = (unscaled < 0n ? -unscaled : unscaled).toString().length;
    if (digits > this.precision) throw new Error(`decimal: ${String(value)} has more than ${this.precision} digits`);
    const size = (this.underlyingType as unknown as { size?: number }).size;
    const bytes: number[] = [];
    let n = unscaled;
    // two's complement, big-endian, as few bytes as keep the sign (or the fixed size)
    do {
      bytes.unshift(Number(n & 0xffn));
      n >>= 8n;
    } while (!(n === 0n && (bytes[0] & 0x80) === 0) && !(n === -1n && (bytes[0] & 0x80) !== 0));
    if (size !== undefined) {
      if (bytes.length > size) throw new Error(`decimal: ${String(value)} does not fit ${size} bytes`);
      while (bytes.length < size) bytes.unshift(unscaled < 0n ? 0xff : 0);
    }
    return Buffer.from(bytes);
  }

  /** Why `value` cannot be written as this decimal. */
  reason(value: unknown): string {
    try {
      this._toValue(value);
      return `${JSON.stringify(value)} does not match the schema`;
    } catch (err) {
      return (err as Error).message;
    }
  }

  protected override _resolve(type: avsc.Type): unknown {
    if (type instanceof DecimalType && type.scale === this.scale) return (value: unknown) => value;
    return undefined;
  }

  private text(n: bigint): string {
    const sign = n < 0n ? '-' : '';
    const digits = (n < 0n ? -n : n).toString().padStart(this.scale + 1, '0');
    return this.scale === 0 ? sign + digits : `${sign}${digits.slice(0, -this.scale)}.${digits.slice(-this.scale)}`;
  }

  private unscaled(value: unknown): bigint {
    if (typeof value === 'bigint') return value * 10n ** BigInt(this.scale);
    const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
    const match = typeof text === 'string' ? /^([+-]?)(\d+)(?:\.(\d*))?$/.exec(text.trim()) : null;
    if (!match) throw new Error(`decimal: ${JSON.stringify(value)} is not a decimal number (a string like "12.34", a number or a BigInt)`);
    // an optional group: undefined without a fraction
    const fraction = (match[3] as string | undefined) ?? '';
    if (fraction.length > this.scale) throw new Error(`decimal: ${text as string} has more than ${this.scale} fraction digits`);
    const n = BigInt(match[2] + fraction.padEnd(this.scale, '0'));
    return match[1] === '-' ? -n : n;
  }
}

/**
 * avsc's reading position in a frame (an internal of avsc 5.7.9, pinned in
 * package.json): what the block readers below use.
 */
interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  readInt(): number;
  skipLong(): void;
  readString(): string;
}

interface Readable {
  _read(tap: Tap): unknown;
}

/** Zero-width items (null, say) cost no bytes: an array of them is capped at this many, not by the bytes left. */
const MAX_ZERO_WIDTH_ITEMS = 65_536;

/**
 * Arrays and maps with bounded readers, made in place of avsc's by the
 * `typeHook` of the avro codec. avsc reads an array block of N items by
 * looping N times before it checks that the frame held them, so a frame
 * announcing 2^40 items keeps decode busy for hours; here a block may not
 * announce more items than the bytes left could hold. Map keys are set as
 * own properties (avsc's `val[key] =` turns a `__proto__` key into the
 * object's prototype).
 */
export class BoundedArrayType extends avsc.types.ArrayType {
  _read(tap: Tap): unknown[] {
    const items = this.itemsType as avsc.Type & Readable;
    const out: unknown[] = [];
    for (let n = blockSize(tap); n !== 0; n = blockSize(tap)) {
      checkBlock('array', n, zeroWidth(items, new Set()) ? MAX_ZERO_WIDTH_ITEMS : tap.buf.length - tap.pos);
      while (n--) out.push(items._read(tap));
    }
    return out;
  }
}

export class BoundedMapType extends avsc.types.MapType {
  _read(tap: Tap): Record<string, unknown> {
    const values = this.valuesType as avsc.Type & Readable;
    const out: Record<string, unknown> = {};
    for (let n = blockSize(tap); n !== 0; n = blockSize(tap)) {
      // every entry holds at least its key's length byte
      checkBlock('map', n, tap.buf.length - tap.pos);
      while (n--) setOwn(out, tap.readString(), values._read(tap));
    }
    return out;
  }
}

/** The item count of the next block; a negative count is followed by the block's byte size, skipped. */
function blockSize(tap: Tap): number {
  const n = tap.readLong();
  if (n >= 0) return n;
  tap.skipLong();
  return -n;
}

function checkBlock(kind: string, n: number, limit: number): void {
  if (!(n <= limit)) throw new Error(`${kind} block of ${n} items, more than the frame can hold`);
}

function zeroWidth(type: avsc.Type, seen: Set<avsc.Type>): boolean {
  if (seen.has(type)) return false;
  seen.add(type);
  if (type.typeName === 'null') return true;
  if (type instanceof avsc.types.FixedType) return type.size === 0;
  if (type instanceof avsc.types.RecordType) return type.fields.every((f) => zeroWidth(f.type, seen));
  if (type instanceof avsc.types.LogicalType) return zeroWidth(type.underlyingType, seen);
  return false;
}
