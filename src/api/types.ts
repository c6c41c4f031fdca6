/**
 * GET /types and POST /types/{kind}/{type}/check: what the console's flow
 * editor needs to know of a type (its palette entry, its form, its ports)
 * and to mark a wrong field on a node before anything is deployed. Read
 * from the runtime's registries (so an embedding application's own types
 * are there too) and checked by the repository's own validation, so the
 * editor refuses exactly what a publish would. Nothing is stored.
 */
import { EddyError, invalid, notFound } from '../core/errors';
import { offrampCatalog, onrampCatalog } from '../connectors/catalog';
import { operatorCatalog } from '../pipeline/operators/catalog';
import type { Runtime } from '../runtime/runtime';
import { typeInfos, type TypeKind } from '../runtime/type-info';
import { RAMP_PORTS } from '../runtime/wiring';
import type { JsonSchema } from '../schema/json-schema';
import { READ_SCHEMAS, readOperation } from './editor-read';
import type { Operation } from './operation';

/** The kinds a flow is drawn with: sources, pipeline nodes, sinks. */
const FLOW_KINDS = ['onramp', 'operator', 'offramp'] as const satisfies readonly TypeKind[];
type FlowKind = (typeof FLOW_KINDS)[number];

const BUILTIN: Record<FlowKind, Set<string>> = {
  onramp: new Set(onrampCatalog.map((t) => t.name)),
  operator: new Set(operatorCatalog.map((t) => t.name)),
  offramp: new Set(offrampCatalog.map((t) => t.name)),
};

/** The page of the repository's docs that describes a builtin type; an application's own type has none. */
function referenceOf(kind: FlowKind, type: string): string | null {
  if (!BUILTIN[kind].has(type)) return null;
  if (kind !== 'operator') return `docs/connectors/${type}.md`;
  return `docs/reference.md#operator-${type.replace(/[^a-z]/g, '')}`;
}

export function typeOperations(runtime: Runtime): Operation[] {
  const list: Operation = {
    method: 'get',
    path: '/types',
    operationId: 'get_types',
    summary: 'Every onramp, operator and offramp type this runtime knows (its own types too): description, config schema, ports',
    tag: 'types',
    jsonOnly: true,
    responses: { 200: { description: 'the types, kind by kind, each sorted by name', schema: 'type_infos' } },
    run: () => ({
      status: 200,
      body: typeInfos(runtime.registries, FLOW_KINDS).map((info) => {
        const kind = info.kind as FlowKind;
        const ports = kind === 'operator' ? { inputs: ['in'], outputs: null } : RAMP_PORTS[kind];
        return { kind, type: info.type, description: info.description, schema: info.schema ?? null, reference: referenceOf(kind, info.type), ...ports };
      }),
    }),
  };
  return [list, ...FLOW_KINDS.map((kind) => checkOperation(runtime, kind)), readOperation(runtime)];
}

function checkOperation(runtime: Runtime, kind: FlowKind): Operation {
  return {
    method: 'post',
    path: `/types/${kind}/{type}/check`,
    operationId: `check_${kind}_config`,
    summary: `Check the config of a ${kind} of this type as a publish would, and say the ports it gives the node; nothing is stored`,
    tag: 'types',
    jsonOnly: true,
    body: { schema: 'node_config', required: true, description: `the config of the ${kind} (its \`config\` field)` },
    responses: {
      200: { description: 'the verdict: the config as read, the first error (naming the field) or none, and the output ports', schema: 'type_check' },
      404: { description: `no ${kind} type of this name` },
    },
    run: (input) => {
      const type = input.params.type;
      const registry = kind === 'operator' ? runtime.registries.operators : kind === 'onramp' ? runtime.registries.onramps : runtime.registries.offramps;
      if (!registry.has(type)) throw notFound(`no ${kind} type '${type}'`);
      const config = input.body;
      if (config === null || typeof config !== 'object' || Array.isArray(config)) throw invalid('body: the config must be an object');
      try {
        return { status: 200, body: { config, error: null, outputs: outputsOf(runtime, kind, type, config as Record<string, unknown>) } };
      } catch (err) {
        if (!(err instanceof EddyError) || err.code !== 'invalid') throw err;
        // no outputs: what a config the type refuses would give is not known
        return { status: 200, body: { config, error: err.message } };
      }
    },
  };
}

/** Validates `config` as the repository does at publish (throws its 400 naming `config.<field>`), and answers the node's outputs. */
function outputsOf(runtime: Runtime, kind: FlowKind, type: string, config: Record<string, unknown>): string[] | null {
  if (kind !== 'operator') {
    runtime.repository.validate(kind, { id: 'check', type, config });
    return RAMP_PORTS[kind].outputs;
  }
  try {
    // a pipeline of this node alone: its type's schema and own checks (a CEL expression), with the messages a publish gives
    runtime.repository.validate('pipeline', {
      id: 'check',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'node', type, config }],
      links: { in: ['node'], node: ['out'] },
    });
  } catch (err) {
    // the schema names `nodes[0].config.window.size`, a type's own check `window::aggregate node node: aggregate.n`: both are the node's `config.…`
    if (err instanceof EddyError) throw invalid(err.message.replace(/^nodes\[0\]\./, '').replace(/^\S+ node node: /, 'config.'));
    throw err;
  }
  const operator = runtime.registries.operators.get(type);
  const ports = operator.outputPorts?.(runtime.repository.operatorConfig(type, config, 'config'));
  if (ports === undefined) return operator.outputPorts ? null : ['out', 'err'];
  return ['out', ...ports.filter((p) => p !== 'out')];
}

/** The schemas of these answers, for the OpenAPI document. */
export const TYPE_SCHEMAS: Record<string, JsonSchema> = {
  ...READ_SCHEMAS,
  type_infos: {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'type', 'description', 'schema', 'reference', 'inputs', 'outputs'],
      properties: {
        kind: { enum: [...FLOW_KINDS] },
        type: { type: 'string', description: 'the name an artefact or node gives in `type`' },
        description: { type: 'string', description: "one line: its config schema's description" },
        schema: { type: ['object', 'null'], description: 'the JSON Schema of its `config`; null: it takes none, or its npm package is not installed' },
        reference: { type: ['string', 'null'], description: "the page of eddy's docs about it; null for an application's own type" },
        inputs: { type: 'array', items: { type: 'string' }, description: 'the ports a link may enter it by' },
        outputs: {
          type: ['array', 'null'],
          items: { type: 'string' },
          description: 'the ports it emits on; null for an operator, whose ports follow from its config (ask the check)',
        },
      },
    },
  },
  node_config: { type: 'object', description: "a node's or ramp's `config`" },
  type_check: {
    type: 'object',
    additionalProperties: false,
    required: ['config', 'error'],
    properties: {
      config: { type: 'object', description: 'the config as the server read it (YAML sent is answered as JSON)' },
      error: {
        type: ['string', 'null'],
        description: 'null: a publish would take it; otherwise its message, naming the field first (`config.window.size: ...`)',
      },
      outputs: {
        type: ['array', 'null'],
        items: { type: 'string' },
        description:
          'the output ports a node with this config has, `out` first; null: any port (a route computed from each event); absent when the config is refused',
      },
    },
  },
};
