import fc from 'fast-check';
import type { CodecSpec } from '../../src/codecs/spec';
import { resolve } from 'node:path';
// support.ts imports this file too: only its functions are used here, and only once both are loaded
import { text, unsafeBigInt } from './support';

/** The schemas the avro and protobuf codec tests use (test/fixtures/codecs), from dist/test/codecs at run time. */
export const AVRO_SCHEMA_FILE = resolve(__dirname, '../../../test/fixtures/codecs/order.avsc');
export const PROTO_SCHEMA_FILE = resolve(__dirname, '../../../test/fixtures/codecs/order.proto');

/** The config the shared codec tests (fuzzing, the mime map, the onramp) make the codecs that need one with. */
export const TEST_CODEC_CONFIG: Record<string, Record<string, unknown>> = {
  avro: { schema_file: AVRO_SCHEMA_FILE },
  protobuf: { schema_file: PROTO_SCHEMA_FILE, message: 'shop.Order' },
};

/** `codec:` for an artefact: the name, or {name, config} for a codec that needs config. */
export function codecSpec(name: string): CodecSpec {
  return TEST_CODEC_CONFIG[name] ? { name, config: TEST_CODEC_CONFIG[name] } : name;
}

/** Every int64, drawn so that both sides of ±2^53 and the ends come up. */
export const int64 = () => fc.oneof(fc.integer(), fc.maxSafeInteger(), unsafeBigInt(-(2n ** 63n), 2n ** 63n - 1n));
const uint64 = () => fc.oneof(fc.nat(), fc.maxSafeNat(), fc.bigInt({ min: 2n ** 53n + 1n, max: 2n ** 64n - 1n }), fc.constant(2n ** 64n - 1n));
const int32 = () => fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const double = () => fc.double({ noNaN: true }).filter((n) => !Object.is(n, -0));
const bytes = (min = 0, max = 12) => fc.uint8Array({ minLength: min, maxLength: max }).map((b) => Buffer.from(b));
/** a decimal of precision 12, scale 2, as the avro codec writes it: always two fraction digits */
const decimal = () =>
  fc.bigInt({ min: -(10n ** 12n) + 1n, max: 10n ** 12n - 1n }).map((n) => {
    const digits = (n < 0n ? -n : n).toString().padStart(3, '0');
    return `${n < 0n ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
  });

/** Records of order.avsc, as the avro codec decodes them. */
export const avroOrder = () =>
  fc.record({
    id: int64(),
    count: int32(),
    customer: text({ maxLength: 20 }),
    amount: double(),
    ratio: fc.float({ noNaN: true }).filter((n) => !Object.is(n, -0)),
    paid: fc.boolean(),
    raw: bytes(),
    digest: bytes(4, 4),
    status: fc.constantFrom('NEW', 'PAID', 'SHIPPED'),
    tags: fc.array(text({ maxLength: 8 }), { maxLength: 4 }),
    counters: fc.dictionary(
      text({ maxLength: 6 }).filter((k) => k !== '__proto__'),
      int64(),
      { maxKeys: 4 },
    ),
    note: fc.option(text({ maxLength: 10 }), { nil: null }),
    line: fc.record({ sku: text({ maxLength: 8 }), qty: int64() }),
    price: decimal(),
    at: int64(),
    at_us: int64(),
    ref: fc.uuid(),
  });

/** Messages of order.proto, as the protobuf codec decodes them (every field present, as proto3 reads it; `note` only when set). */
export const protoOrder = () =>
  fc
    .record({
      id: int64(),
      count: int32(),
      customer: text({ maxLength: 20 }),
      amount: double(),
      paid: fc.boolean(),
      raw: bytes(),
      status: fc.constantFrom('NEW', 'PAID', 'SHIPPED'),
      tags: fc.array(text({ maxLength: 8 }), { maxLength: 4 }),
      counters: fc.dictionary(
        text({ maxLength: 6 }).filter((k) => k !== '__proto__'),
        int64(),
        { maxKeys: 4 },
      ),
      note: fc.option(text({ maxLength: 10 }), { nil: undefined }),
      line: fc.record({ sku: text({ maxLength: 8 }), qty: int64() }),
      total: uint64(),
      delta: int64(),
      mask: uint64(),
      steps: fc.array(int32(), { maxLength: 4 }),
    })
    .map(({ note, ...rest }) => (note === undefined ? rest : { ...rest, note }));
