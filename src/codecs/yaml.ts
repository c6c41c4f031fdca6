import { isUtf8 } from 'node:buffer';
import { parse, Scalar, stringify } from 'yaml';
import type { CodecType } from './codec';
import { integerValue } from './integers';
import { isUnsafeIntegralDouble } from './json/precise-stringify';

// integers are read as BigInt so none is rounded, then the safe ones become numbers again;
// logLevel 'error': the library's warnings (an unknown directive) would go to process.emitWarning,
// so every odd frame an onramp receives would print to stderr
const parseOptions = { intAsBigInt: true, customTags: ['binary' as const], logLevel: 'error' as const };
const stringifyOptions = { customTags: ['binary' as const] };

/** A double holding an integer beyond ±2^53 is written in exponent form, so it reads back as that double, not as a BigInt. */
function unsafeDoublesAsExponents(_key: unknown, value: unknown): unknown {
  if (!isUnsafeIntegralDouble(value)) return value;
  const scalar = new Scalar(value);
  scalar.format = 'EXP';
  return scalar;
}

function safeIntegersAsNumbers(_key: unknown, value: unknown): unknown {
  return typeof value === 'bigint' ? integerValue(value) : value;
}

/**
 * YAML 1.2 (core schema): one document per frame. Same value model as json
 * (integers beyond 2^53 as BigInt); binary values travel as `!!binary`.
 *
 * Integers, exactly: an integer (decimal, `0x` or `0o`) from -2^53 to 2^53
 * decodes to a number, beyond to a BigInt of any size; a BigInt encodes as
 * its exact decimal. A float (`1.5`, `1e20`) is always a number. A double
 * whose value is an integer beyond ±2^53 encodes in exponent form and
 * decodes to the same double.
 * Duplicate keys and several documents in one frame are decode errors.
 */
export const yaml: CodecType = {
  name: 'yaml',
  summary: 'One YAML 1.2 document per frame; integers beyond ±2^53 as BigInt, binary as `!!binary`.',
  mimeTypes: ['application/yaml'],
  create: () => ({
    name: 'yaml',
    decode(data) {
      if (data.length === 0) throw new Error('yaml: empty input');
      if (!isUtf8(data)) throw new Error('yaml: input is not valid UTF-8');
      return parse(data.toString('utf8'), safeIntegersAsNumbers, parseOptions) as unknown;
    },
    encode(value) {
      return Buffer.from(stringify(value ?? null, unsafeDoublesAsExponents, stringifyOptions), 'utf8');
    },
  }),
};
