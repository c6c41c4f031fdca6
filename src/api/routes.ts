import { EddyError, conflict, invalid } from '../core/errors';
import { applyConfig, configDocument, type Applied } from '../config/load';
import type { Runtime } from '../runtime/runtime';
import { KINDS, type Kind } from '../runtime/urls';
import { SchemaValidator } from '../schema/artefacts';
import type { JsonSchema } from '../schema/json-schema';
import { version } from '../version';
import { TAP_KINDS, TAP_QUEUE_DEFAULT, TAP_QUEUE_MAX, tapOptions, type TapKind } from '../runtime/observe/tap';
import { status } from '../runtime/observe/status';
import { LivenessCheck } from '../runtime/observe/liveness';
import { PROMETHEUS_CONTENT_TYPE, PrometheusExporter } from '../runtime/observe/prometheus';
import { streamTap } from './tap';
import type { Artefact } from '../runtime/artefacts';
import type { Operation, OperationInput } from './operation';
import { typeOperations } from './types';

export type { Operation, OperationInput, Reply } from './operation';

/** The path parameters every template uses, with what they name. */
export const PATH_PARAMETERS: Record<string, string> = {
  artefact_id: 'the id of an artefact in the repository',
  instance_id: 'the id of an instance of the artefact',
  port: 'a port of the instance',
  type: 'the name of a type (`file`, `window::aggregate`)',
};

export function operations(runtime: Runtime, openApiDocument: () => unknown, options: { allowSecrets?: boolean } = {}): Operation[] {
  const liveness = new LivenessCheck(runtime);
  const readiness = (path: string, operationId: string, summary: string): Operation => ({
    method: 'get',
    path,
    operationId,
    summary,
    tag: 'service',
    jsonOnly: true,
    responses: {
      200: { description: 'every instance runs (paused by a circuit breaker counts as running)', schema: 'health' },
      503: { description: 'an onramp failed or an offramp is down (or the runtime is shutting down); the body names them', schema: 'health' },
    },
    run: () => {
      const health = runtime.health();
      return { status: health.status === 'ok' ? 200 : 503, body: health };
    },
  });
  const ops: Operation[] = [
    {
      method: 'get',
      path: '/version',
      operationId: 'get_version',
      summary: 'The version of the running eddy',
      tag: 'service',
      jsonOnly: true,
      responses: { 200: { description: 'the version', schema: 'version' } },
      run: () => ({ status: 200, body: { version } }),
    },
    readiness('/health', 'get_health', 'Readiness, as GET /health/ready (kept for the probes that use it)'),
    readiness('/health/ready', 'get_health_ready', 'Readiness: whether every instance runs (for load balancers and readiness probes)'),
    {
      method: 'get',
      path: '/health/live',
      operationId: 'get_health_live',
      summary: 'Liveness: whether the process should be left running (for liveness probes; an offramp that is down does not make it fail)',
      tag: 'service',
      jsonOnly: true,
      responses: {
        200: { description: 'the process serves requests and goes on by itself, even while an instance is down', schema: 'liveness' },
        503: {
          description: 'the runtime asked to exit or is shutting down, or (--workers N > 1) a worker is gone: restart it; `reason` says which',
          schema: 'liveness',
        },
      },
      run: () => {
        const live = liveness.check();
        return { status: live.status === 'ok' ? 200 : 503, body: live };
      },
    },
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'get_openapi',
      summary: 'This description of the API (OpenAPI 3.1)',
      tag: 'service',
      jsonOnly: true,
      responses: { 200: { description: 'the OpenAPI 3.1 document', schema: 'openapi' } },
      run: () => ({ status: 200, body: openApiDocument() }),
    },
    ...observeOperations(runtime),
  ];
  for (const kind of KINDS) ops.push(...kindOperations(runtime, kind, options.allowSecrets === true));
  ops.push(configOperation(runtime, options.allowSecrets === true));
  ops.push(...typeOperations(runtime));
  return ops;
}

/**
 * POST /config: a whole config document (a config file's sections) applied
 * all or nothing, by the very code `eddy server run -f` loads files with
 * (config/load.ts), as one change of the runtime (docs/rest-api.md).
 */
function configOperation(runtime: Runtime, allowSecrets: boolean): Operation {
  return {
    method: 'post',
    path: '/config',
    operationId: 'apply_config',
    summary: 'Apply a whole config all or nothing: publish its artefacts and activate its mappings (the sections of a config file, flow included)',
    description: [
      'Without `replace`, an artefact that differs from the existing one of its id is refused (409).',
      'With `?replace=true` it replaces it by the hot-reload rules (docs/rest-api.md, "Replacing a running flow"):',
      'unchanged artefacts and mappings keep running; a mapping whose only changes are pipelines it runs between unchanged onramps and offramps keeps running,',
      'each changed pipeline instance swapped in place (listed in `swapped`: its onramps pause meanwhile and never stop, the old version drains to the offramps, open windows flushed);',
      'a mapping using any other changed artefact, or whose values changed, is deactivated and activated again (`restarted`).',
      'The answer then also lists `replaced` (artefacts), `restarted` (binding instances) and `swapped` (pipeline instances).',
      'Artefacts and mappings the document does not declare are never touched; a changed artefact that an instance outside the document runs is refused (409), naming it.',
      'With `dry_run=true` too, it answers that plan and changes nothing: what an editor shows before applying.',
    ].join(' '),
    tag: 'config',
    body: { schema: 'config', required: true, description: 'a config document, as a config file holds it (docs/config-files.md); no ${NAME} is replaced' },
    query: [
      { name: 'dry_run', description: '`true`: check everything, change nothing, and answer what would be done', schema: { enum: ['true', 'false'] } },
      {
        name: 'replace',
        description:
          '`true`: a changed artefact replaces the existing one by the hot-reload rules instead of a 409; the answer lists `replaced`, `restarted` and `swapped`',
        schema: { enum: ['true', 'false'] },
      },
    ],
    responses: {
      200: { description: 'nothing changed: everything declared was there already, the same; or a dry run', schema: 'config_applied' },
      201: { description: 'what it published, replaced and activated, and what was there already', schema: 'config_applied' },
      400: { description: 'the document or an artefact is invalid, or a mapping cannot start; the message names the artefact or mapping and the field' },
      409: {
        description:
          'without replace: an artefact differs from an existing one of the same id, or a mapping runs already with other links; with replace: a changed artefact runs in an instance the document does not declare; nothing changed',
      },
    },
    run: async (input) => {
      const { dry_run: dryRun, replace } = flagsOf(input.query ?? {}, ['dry_run', 'replace']);
      if (input.body === undefined) throw invalid('body: missing: POST /config needs a config document (the sections of a config file)');
      const config = configDocument(input.body, '');
      // the same checks as publishing each artefact by itself: a secret in clear text is refused; the policy (--allow-path) is the repository's
      const check = allowSecrets ? undefined : (kind: Kind, artefact: unknown) => refuseSecrets(runtime, kind, artefact);
      let applied: Applied;
      try {
        applied = await applyConfig(runtime, [{ name: '', config }], { dryRun, check, replace });
      } catch (err) {
        // what is missing is named in the body (a binding, a linked artefact), not the URL: a bad request, not 404
        if (err instanceof EddyError && err.code === 'not_found') throw invalid(err.message);
        throw err;
      }
      if (!dryRun) await runtime.persisted();
      const { published, unchanged, activated, running, replaced, restarted, swapped } = applied;
      const changed = published.length + activated.length + replaced.length + restarted.length > 0 && !dryRun;
      const body = { dry_run: dryRun, published, activated, unchanged, running };
      return { status: changed ? 201 : 200, body: replace ? { ...body, replaced, restarted, swapped } : body };
    },
  };
}

/** The query's flags, each `true` or `false` (absent: false), and no other parameter. */
function flagsOf<F extends string>(query: Record<string, unknown>, flags: readonly F[]): Record<F, boolean> {
  for (const name of Object.keys(query))
    if (!(flags as readonly string[]).includes(name)) throw invalid(`query parameter '${name}' is unknown (known: ${flags.join(', ')})`);
  const values = {} as Record<F, boolean>;
  for (const flag of flags) {
    const value = query[flag];
    if (value !== undefined && value !== 'true' && value !== 'false')
      throw invalid(`query parameter '${flag}' must be true or false, given once, not ${JSON.stringify(value)}`);
    values[flag] = value === 'true';
  }
  return values;
}

/** A list in the answer of POST /config: of artefacts (`{kind, id}`) or of instance URLs. */
const listOf = (of: 'artefacts' | 'urls', description: string): JsonSchema => ({
  type: 'array',
  items: of === 'artefacts' ? { $ref: '#/components/schemas/artefact_ref' } : { type: 'string' },
  description,
});

/** The answer of POST /config (documented by this same schema). */
export const CONFIG_APPLIED_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['dry_run', 'published', 'activated', 'unchanged', 'running'],
  properties: {
    dry_run: { type: 'boolean', description: 'true: nothing was changed; the lists say what would be' },
    published: listOf('artefacts', 'artefacts new to the repository, in the order published'),
    activated: listOf('urls', 'the binding instances the mappings activated: /binding/{id}/{instance}'),
    unchanged: listOf('artefacts', 'artefacts that existed already, the same as declared (compared as JSON, key order aside)'),
    running: listOf(
      'urls',
      'mappings whose instance ran already with the same links, left running as it was (with replace: left running, its pipelines maybe swapped)',
    ),
    replaced: listOf('artefacts', 'with replace only: artefacts that existed with another declaration, replaced by this one'),
    restarted: listOf('urls', 'with replace only: running binding instances deactivated (their flow drained) and activated again: /binding/{id}/{instance}'),
    swapped: listOf(
      'urls',
      'with replace only: pipeline instances replaced in place, their onramps paused meanwhile and never stopped: /pipeline/{id}/{instance}',
    ),
  },
};

function kindOperations(runtime: Runtime, kind: Kind, allowSecrets: boolean): Operation[] {
  // every artefact the API gives back shows its secrets as "***" (schema/secrets.ts)
  const shown = <A extends Artefact>(artefact: A): A => runtime.repository.redacted(kind, artefact);
  const one = `/${kind}/{artefact_id}`;
  const instance = `${one}/{instance_id}`;
  const ids = (input: OperationInput) => [input.params.artefact_id, input.params.instance_id] as const;
  return [
    {
      method: 'get',
      path: `/${kind}`,
      operationId: `find_${kind}s`,
      summary: `The ids of the ${kind}s in the repository (system ones included)`,
      tag: kind,
      responses: { 200: { description: `the ${kind} ids`, schema: 'ids' } },
      run: () => ({ status: 200, body: runtime.list(kind) }),
    },
    {
      method: 'post',
      path: `/${kind}`,
      operationId: `publish_${kind}`,
      summary: `Publish a ${kind}`,
      tag: kind,
      body: { schema: kind, required: true, description: `the ${kind} artefact` },
      responses: {
        201: { description: `the stored ${kind}`, schema: kind },
        400: { description: 'the body is malformed or the artefact invalid; the message names the field' },
        409: { description: `a ${kind} with this id exists` },
      },
      // answered once stored (with --data-dir), so an acknowledged change survives a kill -9
      run: async (input) => {
        if (input.body === undefined) throw invalid(`body: missing: POST /${kind} needs the ${kind} to publish`);
        if (!allowSecrets) refuseSecrets(runtime, kind, input.body);
        const artefact = runtime.publish(kind, input.body);
        await runtime.persisted();
        return { status: 201, body: shown(artefact) };
      },
    },
    {
      method: 'get',
      path: one,
      operationId: `get_${kind}_by_id`,
      summary: `A ${kind} and the ids of its running instances`,
      tag: kind,
      responses: {
        200: { description: `the ${kind} and its instances`, schema: `${kind}_state` },
        404: { description: `no such ${kind}` },
      },
      run: (input) => {
        const { artefact, instances } = runtime.describe(kind, ids(input)[0]);
        return { status: 200, body: { artefact: shown(artefact), instances } };
      },
    },
    {
      method: 'delete',
      path: one,
      operationId: `delete_${kind}_by_id`,
      summary: `Remove a ${kind} from the repository`,
      tag: kind,
      responses: {
        200: { description: `the removed ${kind}`, schema: kind },
        404: { description: `no such ${kind}` },
        409: { description: 'instances of it still run, or it is a system artefact' },
      },
      run: async (input) => {
        const artefact = runtime.unpublish(kind, ids(input)[0]);
        await runtime.persisted();
        return { status: 200, body: shown(artefact) };
      },
    },
    {
      method: 'post',
      path: instance,
      operationId: `activate_${kind}`,
      summary:
        kind === 'binding'
          ? 'Activate a binding instance: deploy and connect what its links name, with the placeholders filled in'
          : `Activate an instance of a ${kind}`,
      tag: kind,
      ...(kind === 'binding'
        ? { body: { schema: 'placeholders', required: false, description: 'values for the placeholders of the links; `instance` is always the instance id' } }
        : {}),
      responses: {
        201: { description: kind === 'binding' ? 'the binding with its links resolved' : `the ${kind}`, schema: kind },
        400: { description: 'the instance id is not an id, or a link or a port is wrong (nothing was started)' },
        404: { description: `no such ${kind}, or an artefact its links name is missing` },
        409: { description: 'the instance already runs' },
      },
      run: async (input) => {
        const [artefactId, instanceId] = ids(input);
        return { status: 201, body: shown(await runtime.activate(kind, artefactId, instanceId, placeholders(input.body))) };
      },
    },
    {
      method: 'get',
      path: instance,
      operationId: `get_${kind}_instance_by_id`,
      summary: `A running instance of a ${kind}`,
      tag: kind,
      responses: {
        200: { description: kind === 'binding' ? 'the binding with its links resolved' : `the ${kind}`, schema: kind },
        404: { description: 'no such artefact or instance' },
      },
      run: (input) => ({ status: 200, body: shown(runtime.getInstance(kind, ...ids(input))) }),
    },
    {
      method: 'delete',
      path: instance,
      operationId: `deactivate_${kind}`,
      summary: `Deactivate an instance of a ${kind}, and every instance only it kept alive`,
      tag: kind,
      responses: {
        200: { description: 'the old instance data', schema: kind },
        404: { description: 'no such artefact or instance' },
        409: { description: 'a binding uses the instance, or it is a system instance' },
      },
      run: async (input) => ({ status: 200, body: shown(await runtime.deactivate(kind, ...ids(input))) }),
    },
  ];
}

/** GET /status, GET /metrics and the live tap of every kind with ports (docs/observe.md). */
function observeOperations(runtime: Runtime): Operation[] {
  const prometheus = new PrometheusExporter();
  const positive = (integer: boolean, max?: number): JsonSchema => ({
    type: 'string',
    pattern: integer ? '^[0-9]+$' : '^[0-9]+(\\.[0-9]+)?$',
    description: `a positive ${integer ? 'integer' : 'number'}${max ? `, at most ${max}` : ''}`,
  });
  const ops: Operation[] = [
    {
      method: 'get',
      path: '/status',
      operationId: 'get_status',
      summary: 'Artefacts, instances, their states and circuit breakers, and cumulative event counts per port',
      tag: 'service',
      jsonOnly: true,
      responses: { 200: { description: 'the status; rates are the difference of two polls', schema: 'status' } },
      run: async () => ({ status: 200, body: status(runtime, await runtime.observeAll()) }),
    },
    {
      method: 'get',
      path: '/metrics',
      operationId: 'get_metrics',
      summary: 'Metrics in the Prometheus text format: events, errors, bytes and circuit breakers per instance and port, and the process',
      tag: 'service',
      produces: PROMETHEUS_CONTENT_TYPE,
      responses: { 200: { description: 'the Prometheus text exposition format, version 0.0.4' } },
      run: async () => ({ status: 200, type: PROMETHEUS_CONTENT_TYPE, body: await prometheus.scrape(await runtime.observeAll()) }),
    },
  ];
  for (const kind of TAP_KINDS) {
    ops.push({
      method: 'get',
      path: `/tap/${kind}/{artefact_id}/{instance_id}/{port}`,
      operationId: `tap_${kind}`,
      summary: `Stream the events passing a port of a running ${kind} instance as Server-Sent Events (${TAP_PORTS[kind]})`,
      tag: 'service',
      jsonOnly: true,
      produces: 'text/event-stream',
      query: [
        {
          name: 'filter',
          description: 'a CEL expression on `event` and `meta`: only the events it gives true for are sent (an evaluation error does not pass)',
          schema: { type: 'string' },
        },
        { name: 'sample', description: 'send every Nth event passing the port and the filter (default 1: all)', schema: positive(true) },
        { name: 'rate', description: 'at most R events a second to this client; the rest are reported as missed', schema: positive(false) },
        { name: 'max', description: 'end the stream after M events', schema: positive(true) },
        {
          name: 'queue',
          description: `events held while the client reads slower than they pass (default ${TAP_QUEUE_DEFAULT}); beyond, they are reported as missed`,
          schema: positive(true, TAP_QUEUE_MAX),
        },
      ],
      responses: {
        200: { description: 'a text/event-stream of `event`, `missed` and `end` messages (docs/observe.md)' },
        400: { description: 'a query parameter is unknown, not a positive number, or a filter that does not parse; the message names it' },
        404: { description: 'no such artefact, instance or port; the message says which' },
        409: { description: 'the tap is not available in this server (`--workers N > 1`); the message says why' },
      },
      run: (input) => {
        const unavailable = runtime.tapUnavailable();
        if (unavailable) throw conflict(unavailable);
        const at = { kind: kind, artefact: input.params.artefact_id, instance: input.params.instance_id, port: input.params.port };
        const options = tapOptions(input.query ?? {});
        // resolve now, so a missing port is a 404 before the stream starts
        runtime.taps.check(at.kind, at.artefact, at.instance, at.port);
        return { status: 200, body: null, stream: (req, res) => streamTap(runtime.taps, req, res, at, options) };
      },
    });
  }
  return ops;
}

const TAP_PORTS: Record<TapKind, string> = {
  onramp: 'out: events it emits after decoding; err: input it could not decode',
  pipeline: 'an input port (in): events entering; an output port (out, err): events leaving',
  offramp: 'in: events it receives',
};

/** Binding activation takes optional placeholder values: a map of strings (documented by this same schema). */
export const PLACEHOLDERS_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'placeholder names to values',
};
const validator = new SchemaValidator();

/**
 * A secret sent in clear text over the API is refused (400) unless the
 * server runs with --api-allow-secrets: the API never gives it back, so
 * the one who sent it cannot check it, and it travels and is stored as
 * typed. A config file with ${NAME} or ${file:PATH} keeps it out of both.
 */
function refuseSecrets(runtime: Runtime, kind: Kind, body: unknown): void {
  const artefact = runtime.repository.validate(kind, body);
  const fields = runtime.repository.secretsIn(kind, artefact);
  if (fields.length === 0) return;
  throw invalid(
    `${fields.join(', ')}: a secret in clear text; the API takes none unless the server runs with --api-allow-secrets. ` +
      'Declare the artefact in a config file with ${NAME} or ${file:PATH} in its place (docs/security.md, "Secrets")',
  );
}

function placeholders(body: unknown): Record<string, string> {
  if (body === undefined || body === null) return {};
  validator.check(PLACEHOLDERS_SCHEMA, body, 'body');
  return body as Record<string, string>;
}
