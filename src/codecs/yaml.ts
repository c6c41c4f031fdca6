import { isUtf8 } from 'node:buffer';
import { parse, stringify } from 'yaml';
import type { CodecType } from './codec';
import { integerValue } from './integers';


// integers are read as BigInt so none is rounded, then the safe ones become numbers again
const parseOptions = { intAsBigInt: true, customTags: ['binary' as const] };
const stringifyOptions = { customTags: ['binary' as const] };

function safeIntegersAsNumbers(_key: unknown, value: unknown): unknown {
  return typeof value === 'bigint' ? integerValue(value) : value;
}

/**
 * YAML 1.2 (core schema): one document per frame. Same value model as json
 * (integers beyond 2^53 as BigInt); binary values travel as `!!binary`.
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
      return Buffer.from(stringify(value ?? null, stringifyOptions), 'utf8');
    },
  }),
};
