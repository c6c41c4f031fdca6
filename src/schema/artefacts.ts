import type Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { invalid } from '../core/errors';
import { durationSchema } from './duration';
import { s } from './typed';
import type { Input } from './typed';
import type { JsonSchema } from './json-schema';
import { precompiledValidator } from './precompiled';

/** The spec's identifier shape: artefact, instance and port ids. */
export const ID_PATTERN = '^[a-z][a-zA-Z_:]*$';
export const ID_RE = new RegExp(ID_PATTERN);
const LINK_KEY_PATTERN = '^[a-zA-Z][A-Za-z0-9_/]*$';

/**
 * Binding link URLs: `[svc://host]/kind/artefact/instance[/port]`. The spec's
 * pattern is narrower than its own examples, so this one also admits system
 * ids with `::`, the `{placeholder}` instance segment and an optional port.
 */
const SEG = '[a-z][a-zA-Z_:]*';
const INSTANCE_SEG = '[a-zA-Z_:{}]+';
export const BINDING_SRC_PATTERN = `^(svc://[^/]*)?/(onramp|pipeline|offramp)/${SEG}/${INSTANCE_SEG}(/${SEG})?$`;
export const BINDING_DST_PATTERN = `^(svc://[^/]*)?/(pipeline|offramp|onramp)/${SEG}/${INSTANCE_SEG}(/${SEG})?$`;

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
      initial: durationSchema('the delay before the first retry; default 100ms'),
      max: durationSchema('no delay is longer; default 10s'),
      factor: s.number({ minimum: 1, description: 'each delay is the previous one times this; default 2' }),
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
  const id = { type: 'string', pattern: ID_PATTERN };
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
      required: ['id', 'interface', 'nodes', 'links'],
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
          propertyNames: { pattern: LINK_KEY_PATTERN },
          additionalProperties: { type: 'array', items: { type: 'string', pattern: LINK_KEY_PATTERN } },
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
          propertyNames: { pattern: BINDING_SRC_PATTERN },
          additionalProperties: { type: 'array', items: { type: 'string', pattern: BINDING_DST_PATTERN } },
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
    if (!validate(value)) throw invalid(describe(where, validate.errors ?? []));
  }

  private compile(schema: JsonSchema): ValidateFunction {
    if (!this.ajv) {
      const AjvClass = (require('ajv') as typeof import('ajv')).default; // eslint-disable-line @typescript-eslint/no-require-imports -- ajv is loaded only for a schema the build did not precompile
      this.ajv = new AjvClass(AJV_OPTIONS);
    }
    return this.ajv.compile(schema);
  }
}

function describe(where: string, errors: ErrorObject[]): string {
  const e = reported(errors);
  if (!e) return `${where}: invalid`;
  const path = fieldPath(where, e.instancePath) || '(top level)';
  const key = (e as ErrorObject & { propertyName?: string }).propertyName;
  if (key !== undefined) return `${path}: invalid key '${key}': ${e.message ?? 'invalid'}`;
  switch (e.keyword) {
    case 'additionalProperties':
      return `${path}: unknown field '${(e.params as { additionalProperty: string }).additionalProperty}'`;
    case 'required':
      return `${path}: missing required field '${(e.params as { missingProperty: string }).missingProperty}'`;
    case 'dependencies': {
      const { property, missingProperty } = e.params as { property: string; missingProperty: string };
      return `${path}: missing field '${missingProperty}', required with '${property}'`;
    }
    case 'enum':
      return `${path}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    case 'pattern':
      return `${path}: must match ${(e.params as { pattern: string }).pattern}`;
    case 'propertyNames':
      return `${path}: invalid key '${(e.params as { propertyName: string }).propertyName}'`;
    case 'anyOf':
      return describeAlternatives(path, e, errors);
    default:
      return `${path}: ${e.message ?? 'invalid'}`;
  }
}

/**
 * The error to report. ajv lists an `anyOf`'s failed branches before the
 * `anyOf` itself; a branch that got further into the value than the `anyOf`
 * (`{name: lines, config: [1]}` failing at `config`) says more than "none of
 * the alternatives", so the deepest such branch error wins.
 */
function reported(errors: ErrorObject[]): ErrorObject | undefined {
  const alternatives = errors.find((e) => e.keyword === 'anyOf');
  if (!alternatives) return errors[0];
  const deeper = errors.filter((e) => e.instancePath.length > alternatives.instancePath.length);
  return deeper.sort((a, b) => b.instancePath.length - a.instancePath.length)[0] ?? alternatives;
}

/** An `anyOf` no branch of which matched at its own level: what the branches asked for. */
function describeAlternatives(path: string, alternatives: ErrorObject, errors: ErrorObject[]): string {
  // each branch's errors, by the branch's place in the schema (`…/anyOf/0/type`)
  const branches = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    const branch = /^\/(\d+)\//.exec(e.schemaPath.slice(alternatives.schemaPath.length))?.[1];
    if (e === alternatives || branch === undefined || !e.schemaPath.startsWith(alternatives.schemaPath)) continue;
    branches.set(branch, [...(branches.get(branch) ?? []), e]);
  }
  const failures = [...branches.values()];
  const typeErrors = failures.map((list) => list.find((e) => e.keyword === 'type'));
  if (failures.length > 0 && typeErrors.every((e) => e !== undefined)) {
    return `${path}: must be ${typeErrors.map((e) => (e.params as { type: string }).type).join(' or ')}`;
  }
  // one branch of the value's own type (`codec: nope` fails the name branch; the {name, config} one wants an object): its error says it
  const ofItsType = failures.filter((list) => !list.some((e) => e.keyword === 'type' && e.instancePath === alternatives.instancePath));
  const single = ofItsType.length === 1 ? ofItsType[0].find((e) => e.instancePath === alternatives.instancePath) : undefined;
  if (single?.keyword === 'enum') return `${path}: must be one of ${(single.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  if (failures.length > 0 && failures.every((list) => list.every((e) => e.keyword === 'required'))) {
    const fields = failures.flat().map((e) => `'${(e.params as { missingProperty: string }).missingProperty}'`);
    return `${path}: missing required field, one of ${fields.join(', ')}`;
  }
  return `${path}: ${alternatives.message ?? 'invalid'}`;
}

/** `where` then the JSON pointer as a field path: `/nodes/0/a~1b` is `nodes[0].a/b`. */
function fieldPath(where: string, instancePath: string): string {
  let path = where;
  for (const raw of instancePath.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^(0|[1-9][0-9]*)$/.test(segment)) path += `[${segment}]`;
    else path += path === '' ? segment : `.${segment}`;
  }
  return path;
}
