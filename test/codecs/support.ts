import { xz } from '@napi-rs/lzma';
import fc from 'fast-check';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { builtinCodecs } from '../../src/codecs';
import type { Codec } from '../../src/codecs/codec';
import { TEST_CODEC_CONFIG } from './schema-support';

/** The repository root, from dist/test/codecs at run time. */
export const repoRoot = resolve(__dirname, '../../..');

/** Real sample data, copied into the repository so a fresh clone needs nothing beside it. */
function sharedData(name: string): string {
  const path = resolve(repoRoot, 'test/fixtures/data', name);
  if (!existsSync(path)) throw new Error(`sample data ${path} is missing`);
  return path;
}

export function sampleLines(name: 'data.json.xz' | 'apache_access_logs.xz'): Buffer[] {
  const text = xz.decompressSync(readFileSync(sharedData(name)));
  const lines: Buffer[] = [];
  let start = 0;
  for (let end = text.indexOf(10); end !== -1; end = text.indexOf(10, start)) {
    lines.push(text.subarray(start, end));
    start = end + 1;
  }
  if (start < text.length) lines.push(text.subarray(start));
  return lines;
}

export function fixture(...path: string[]): Buffer {
  return readFileSync(resolve(repoRoot, 'test/fixtures', ...path));
}

/** A builtin codec; those that need config (avro, protobuf) made with the test schemas of ./schema-support. */
export function codec(name: string): Codec {
  const type = builtinCodecs.find((candidate) => candidate.name === name);
  if (!type) throw new Error(`no codec ${name}`);
  return type.create(TEST_CODEC_CONFIG[name]);
}

export const INGEST_NS = 1_700_000_000_123_456_789n;

const NUMBER_LIMIT = 2n ** 53n;
const isIndexKey = (key: string) => /^(0|[1-9][0-9]*)$/.test(key);

/** Text as it survives UTF-8: lone surrogates become U+FFFD before the test, not during it. */
export const text = (constraints: fc.StringConstraints = {}) =>
  fc.string({ unit: 'binary', ...constraints }).map((s) => Buffer.from(s, 'utf8').toString('utf8'));

/** Object keys that are not array indices, whose order a JavaScript object keeps. */
export const key = () => text({ maxLength: 12 }).filter((k) => !isIndexKey(k));

/** The integer boundaries: ±(2^53 + 1), the first integers only a BigInt holds, and the ends of the 64-bit types. */
export const BIGINT_BOUNDARIES = [NUMBER_LIMIT + 1n, -(NUMBER_LIMIT + 1n), 2n ** 64n - 1n, -(2n ** 63n)] as const;
/** ±2^53: the last integers a number holds exactly (eddy keeps them numbers). */
export const NUMBER_BOUNDARIES = [2 ** 53, -(2 ** 53)] as const;

/** Integers beyond 2^53 within the given bounds, which only BigInt holds exactly; the boundaries within them are drawn too. */
export const unsafeBigInt = (min: bigint, max: bigint) => {
  const boundaries = BIGINT_BOUNDARIES.filter((k) => k >= min && k <= max);
  return fc.oneof(
    fc.bigInt({ min: NUMBER_LIMIT + 1n, max }),
    fc.bigInt({ min, max: -NUMBER_LIMIT - 1n }),
    ...(boundaries.length > 0 ? [fc.constantFrom(...boundaries)] : []),
  );
};

/**
 * eddy's value model as the structured codecs share it: JSON values, with
 * integers beyond 2^53 as BigInt, ±2^53 itself as numbers, and doubles of
 * any finite value (integral ones beyond 2^53 included: they stay doubles);
 * -0 is left out (JSON has no negative zero).
 */
export function eddyValue(bigints: fc.Arbitrary<bigint>): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.constantFrom(...NUMBER_BOUNDARIES, 2 ** 60, -(2 ** 64)),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    text(),
    bigints,
  );
  return fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(key(), tie('value'), { maxKeys: 5 }),
    ),
  })).value;
}

/** Key order matters to eddy, and chai's deep equality ignores it: compare the key lists too. */
export function keyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(keyOrder);
  if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
    return Object.entries(value).map(([k, v]) => [k, keyOrder(v)]);
  }
  return null;
}
