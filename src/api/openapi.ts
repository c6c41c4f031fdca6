import type { Registries } from '../runtime/registries';
import { KINDS } from '../runtime/urls';
import { artefactSchemas, ID_MAX_LENGTH, ID_PATTERN, type SchemaNames } from '../schema/artefacts';
import type { JsonSchema } from '../schema/json-schema';
import { version } from '../version';
import { JSON_ONLY, JSON_OR_YAML } from './negotiate';
import { CONFIG_APPLIED_SCHEMA, PATH_PARAMETERS, PLACEHOLDERS_SCHEMA, type Operation } from './routes';
import { FLOW_SCHEMA } from '../config/flow';
import { STATUS_SCHEMA } from '../runtime/observe/status';
import { TYPE_SCHEMAS } from './types';

/**
 * The OpenAPI 3.1 document of the API, built from the route table (every
 * operation, its parameters, bodies and statuses) and from the very JSON
 * schemas the repository validates published artefacts with, with the
 * codec and processor names of this runtime's registries. OpenAPI 3.1 takes
 * JSON Schema 2020-12, which these schemas are written in the common subset of.
 */
export function openApiDocument(ops: Operation[], registries: Registries, access: { token: boolean }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of ops) {
    const item = (paths[op.path] ??= pathParameters(op.path));
    item[op.method] = operation(op, access);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'eddy REST API',
      version,
      description:
        'The management API of eddy: the artefact repository (pipelines, onramps, offramps, bindings) and their running instances. ' +
        'Every error has the body {"error": "<message>"}. A method a path does not have answers 405 with an Allow header; ' +
        'HEAD is answered wherever GET is, and OPTIONS on every path. Responses are JSON unless Accept prefers YAML; ' +
        'an Accept that refuses every type the operation offers answers 406.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: [
      { name: 'service', description: 'version, health (liveness and readiness), status, metrics, the live tap and this document' },
      ...KINDS.map((kind) => ({ name: kind, description: `${kind} artefacts and their instances` })),
      { name: 'config', description: 'a whole config (the content of a config file) applied at once, all or nothing' },
      { name: 'types', description: 'the onramp, operator and offramp types this runtime knows, and a check of a config against one (for editors)' },
    ],
    paths,
    components: {
      schemas: componentSchemas(schemaNames(registries)),
      ...(access.token
        ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'the token eddy was started with (--api-token or EDDY_API_TOKEN)' } } }
        : {}),
    },
    ...(access.token ? { security: [{ bearer: [] }] } : {}),
  };
}

/** The registry names the artefact schemas enumerate, as the Repository passes them. */
export function schemaNames(registries: Registries): SchemaNames {
  return {
    codecs: registries.codecs.names(),
    preprocessors: registries.preprocessors.names(),
    postprocessors: registries.postprocessors.names(),
  };
}

function pathParameters(path: string): Record<string, unknown> {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  if (names.length === 0) return {};
  return {
    parameters: names.map((name) => ({
      name,
      in: 'path',
      required: true,
      description: PATH_PARAMETERS[name],
      schema: { type: 'string', maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN },
    })),
  };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function content(schema: string, types: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(types.map((type) => [type, { schema: ref(schema) }]));
}

function operation(op: Operation, access: { token: boolean }): Record<string, unknown> {
  const types = op.jsonOnly ? JSON_ONLY : JSON_OR_YAML;
  const responses: Record<string, unknown> = {};
  const add = (status: number, description: string, schema = 'error', headers?: Record<string, unknown>, only = types) => {
    responses[String(status)] ??= { description, content: content(schema, only), ...(headers ? { headers } : {}) };
  };
  for (const [status, r] of Object.entries(op.responses)) {
    // a text reply (Prometheus, an event stream) is documented as a string of its media type
    if (op.produces && Number(status) < 300) responses[status] = { description: r.description, content: { [op.produces]: { schema: { type: 'string' } } } };
    else add(Number(status), r.description, r.schema);
  }
  if (op.body) {
    add(400, 'the body is malformed, nested too deep, or its YAML aliases expand too much');
    add(413, 'the body is larger than the limit (--api-max-body)');
    add(503, 'too many YAML bodies wait to be parsed', 'error', { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds' } });
  }
  // also where the body is ignored: a body must say it is JSON or YAML (no cross-site form posts)
  add(415, 'the request has a body without a Content-Type, or with one other than JSON or YAML');
  if (access.token) {
    add(401, 'no bearer token, or a wrong one', 'error', { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'Bearer realm="eddy"' } });
  }
  add(403, 'the Origin or Host header names another site (--api-allow-origin admits one)');
  add(406, 'Accept refuses every type this operation answers with', 'error', undefined, JSON_ONLY);
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    ...(op.query ? { parameters: op.query.map((q) => ({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema })) } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required,
            description: op.body.description,
            content: content(op.body.schema, JSON_OR_YAML),
          },
        }
      : {}),
    responses,
  };
}

function componentSchemas(names: SchemaNames): Record<string, JsonSchema> {
  const ids: JsonSchema = { type: 'array', items: { type: 'string', maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN } };
  const states = Object.fromEntries(
    KINDS.map((kind) => [
      `${kind}_state`,
      {
        type: 'object',
        additionalProperties: false,
        required: ['artefact', 'instances'],
        properties: { artefact: ref(kind), instances: ref('ids') },
      },
    ]),
  );
  return {
    ...artefactSchemas(names),
    ...states,
    ids,
    placeholders: PLACEHOLDERS_SCHEMA,
    config: {
      type: 'object',
      additionalProperties: false,
      description: 'a config document: the sections of a config file (docs/config-files.md)',
      properties: {
        ...Object.fromEntries(KINDS.map((kind) => [kind, { type: ['array', 'null'], items: ref(kind), description: `${kind} artefacts to publish` }])),
        mapping: {
          type: ['object', 'null'],
          description: 'binding instances to activate, /binding/{id}/{instance}, each with its placeholder values',
          additionalProperties: { anyOf: [ref('placeholders'), { type: 'null' }] },
        },
        flow: { type: ['array', 'null'], items: FLOW_SCHEMA, description: 'flows: each a binding and its mapping in a few lines' },
      },
    },
    config_applied: CONFIG_APPLIED_SCHEMA,
    artefact_ref: {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'id'],
      properties: { kind: { enum: [...KINDS] }, id: { type: 'string' } },
    },
    status: STATUS_SCHEMA,
    ...TYPE_SCHEMAS,
    version: { type: 'object', required: ['version'], properties: { version: { type: 'string', description: 'semantic version' } } },
    health: {
      type: 'object',
      required: ['status', 'instances'],
      properties: {
        status: { enum: ['ok', 'unhealthy'] },
        instances: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['url', 'state'],
            properties: {
              url: { type: 'string', description: 'an instance (`/onramp/in/main`), or with --workers N > 1 a worker itself (`/worker/1`)' },
              state: { enum: ['running', 'paused', 'down', 'failed'] },
              reason: { type: 'string' },
              worker: {
                type: 'integer',
                minimum: 0,
                description: 'with --workers N > 1: the worker this entry is about (an instance on every worker has an entry per worker)',
              },
              pid: { type: 'integer', description: 'on a `/worker/N` entry: the process id of that worker' },
            },
          },
        },
      },
    },
    liveness: {
      type: 'object',
      additionalProperties: false,
      required: ['status'],
      properties: {
        status: { enum: ['ok', 'unhealthy'] },
        reason: { type: 'string', description: 'why the process should be restarted; absent when ok' },
      },
    },
    openapi: {
      type: 'object',
      description: 'an OpenAPI 3.1 document',
      required: ['openapi', 'info', 'paths'],
      properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
    },
    error: { type: 'object', additionalProperties: false, required: ['error'], properties: { error: { type: 'string' } } },
  };
}
