import type Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import { invalid } from '../core/errors';
import { duration } from './duration';
import { s } from './typed';
import type { Input } from './typed';
import type { JsonSchema } from './json-schema';
import { precompiledValidator } from './precompiled';
import { BINDING_DST_PATTERN, BINDING_SRC_PATTERN, ID_MAX_LENGTH, ID_PATTERN, LINK_KEY_PATTERN } from './ids';
import { describe } from './messages';

export { BINDING_DST_PATTERN, BINDING_SRC_PATTERN, ID_MAX_LENGTH, ID_PATTERN, ID_RE } from './ids';

/** A pipeline link's `node/port`: two ids and the slash. */
const LINK_KEY_MAX_LENGTH = 2 * ID_MAX_LENGTH + 1;

/** A binding link URL: `svc://` and a host name (at most 253), `/pipeline` (the longest kind) and three ids with their slashes. */
const LINK_URL_MAX_LENGTH = 'svc://'.length + 253 + '/pipeline'.length + 3 * (1 + ID_MAX_LENGTH);

export interface SchemaNames {
  codecs: string[];
  preprocessors: string[];
  postprocessors: string[];
}

/** Processor entries: a registered name, or `{name, config}`. */
function processorList(names: string[]): JsonSchema {
  return {
    type: 'array',
    items: {
      anyOf: [
        { type: 'string', enum: names },
        {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: { type: 'string', enum: names }, config: { type: 'object' } },
        },
      ],
    },
  };
}

/** The failure classes an offramp's `retry.on` may name (connectors/_shared/retry.ts classifies a sink's errors). */
export const RETRY_ON = ['connection', 'timeout', '429', '4xx', '5xx', 'any'] as const;

const retrySchema = s.object(
  {
    attempts: s.integer({ minimum: 1, maximum: 1000, description: 'sends in all, the first one included' }),
    backoff: s.object({
      initial: duration('the delay before the first retry; default 100ms'),
      max: duration('no delay is longer; default 10s'),
      factor: s.number({ minimum: 1, description: 'each delay is the previous one times this; default 2' }),
      jitter: s.boolean({
        description: 'wait a random time up to each delay (full jitter), so senders that failed together do not retry together; default true',
      }),
    }),
    on: s.array(
      // 429 as a number too: YAML reads `on: [5xx, 429]` so
      s.literals([...RETRY_ON, 429]),
      { uniqueItems: true, minItems: 1, description: 'the failures to retry; default [connection, timeout, 429, 5xx]' },
    ),
  },
  { description: 'retry a failed send before failing the event (docs/delivery.md)', required: ['attempts'] },
);

/** An offramp's `retry` (docs/delivery.md "Retries"). */
export type RetryConfig = Input<typeof retrySchema>;

const deadLetterSchema = s.object(
  {
    ack_source: s.boolean({
      description: 'ack the source once the dead-letter path delivered the event (default false: the source is failed, and may redeliver)',
    }),
  },
  { description: 'failed events leave on the err port when it is linked (docs/delivery.md)' },
);

/** An offramp's `dead_letter` (docs/delivery.md "Dead letters"). */
export type DeadLetterConfig = Input<typeof deadLetterSchema>;

export function artefactSchemas(names: SchemaNames): Record<'pipeline' | 'onramp' | 'offramp' | 'binding', JsonSchema> {
  const id = { type: 'string', maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN };
  const codecName = { type: 'string', enum: names.codecs };
  // a name, or {name, config} for a codec that takes config (avro, protobuf); the config is checked against the codec's own schema
  const codec = {
    anyOf: [codecName, { type: 'object', additionalProperties: false, required: ['name'], properties: { name: codecName, config: { type: 'object' } } }],
  };
  const codecMap = { type: 'object', additionalProperties: codecName };
  const streamNames = { type: 'array', items: id };
  const ramp = {
    id,
    type: { type: 'string', minLength: 1 },
    codec,
    codec_map: codecMap,
    config: { type: 'object' },
    description: { type: 'string' },
    linked: { type: 'boolean' },
    metrics_interval_s: { type: 'integer', minimum: 1 },
    preprocessors: processorList(names.preprocessors),
    postprocessors: processorList(names.postprocessors),
  };
  return {
    pipeline: {
      type: 'object',
      additionalProperties: false,
      // without links the nodes are chained in order, without an interface it is [in] -> [out, err] (Repository.validate)
      required: ['id', 'nodes'],
      properties: {
        id,
        description: { type: 'string' },
        metrics_interval_s: { type: 'integer', minimum: 1 },
        interface: {
          type: 'object',
          additionalProperties: false,
          properties: { inputs: streamNames, outputs: streamNames },
        },
        nodes: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'type'],
            properties: { id, type: { type: 'string', minLength: 1 }, config: { type: 'object' }, description: { type: 'string' } },
          },
        },
        links: {
          type: 'object',
          propertyNames: { maxLength: LINK_KEY_MAX_LENGTH, pattern: LINK_KEY_PATTERN },
          additionalProperties: { type: 'array', items: { type: 'string', maxLength: LINK_KEY_MAX_LENGTH, pattern: LINK_KEY_PATTERN } },
        },
      },
    },
    onramp: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'type'],
      properties: { ...ramp, err_required: { type: 'boolean' } },
    },
    offramp: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'type'],
      properties: { ...ramp, retry: retrySchema, dead_letter: deadLetterSchema },
    },
    binding: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'links'],
      properties: {
        id,
        description: { type: 'string' },
        links: {
          type: 'object',
          propertyNames: { maxLength: LINK_URL_MAX_LENGTH, pattern: BINDING_SRC_PATTERN },
          additionalProperties: { type: 'array', items: { type: 'string', maxLength: LINK_URL_MAX_LENGTH, pattern: BINDING_DST_PATTERN } },
        },
      },
    },
  };
}

/** The ajv options every validator is made with, at run time and by the build's precompile step alike. */
export const AJV_OPTIONS = { allErrors: false, useDefaults: true, strict: false } as const;

/**
 * Validates against JSON schemas, each turned into a function once: the
 * build's generated module for that exact schema when there is one (see
 * ./precompiled), else compiled by an ajv instance made (and ajv loaded) on
 * the first schema that needs it.
 */
export class SchemaValidator {
  private ajv?: Ajv;
  private readonly cache = new WeakMap<JsonSchema, ValidateFunction>();

  /** Validates (and fills defaults into) `value`, or throws a 400 naming the field. */
  check(schema: JsonSchema, value: unknown, where: string): void {
    let validate = this.cache.get(schema);
    if (!validate) this.cache.set(schema, (validate = precompiledValidator(schema) ?? this.compile(schema)));
    if (!validate(value)) throw invalid(describe(where, validate.errors ?? [], schema, value));
  }

  private compile(schema: JsonSchema): ValidateFunction {
    if (!this.ajv) {
      const AjvClass = (require('ajv') as typeof import('ajv')).default; // eslint-disable-line @typescript-eslint/no-require-imports -- ajv is loaded only for a schema the build did not precompile
      this.ajv = new AjvClass(AJV_OPTIONS);
    }
    return this.ajv.compile(schema);
  }
}
