/**
 * The JSON Schema of a config file (`eddy schema`), for editors to complete
 * and check one as it is written. Made from what publish checks: the
 * artefact schemas of schema/artefacts.ts and each registered type's config
 * schema, chosen by the artefact's `type` (an onramp's `config` is checked
 * against its type's schema; a codec's or processor's `{name, config}` by
 * its name), plus the file-only sections `mapping` and
 * `flow` (declared.ts, flow.ts). Publish checks more than a schema can say
 * (a pipeline's links against its nodes, a cron expression); what the
 * editor accepts, publish may still refuse, never the other way round.
 */
import { artefactSchemas } from '../schema/artefacts';
import type { JsonSchema } from '../schema/json-schema';
import type { Registries } from '../runtime/registries';
import { typeInfos, typeNames, type TypeKind } from '../runtime/type-info';
import { MAPPING_KEY, SECTIONS } from './declared';

/**
 * `allOf` of one `if type is T then config is T's schema` per type: an
 * editor completes and checks `config` once `type` is written.
 */
function configByType(registries: Registries, kind: TypeKind, typeKey: string, noSchema: JsonSchema | boolean = { type: 'object' }): JsonSchema[] {
  return typeInfos(registries, [kind]).map((t) => ({
    if: { properties: { [typeKey]: { const: t.type } }, required: [typeKey] },
    then: { properties: { config: t.schema ?? noSchema } },
  }));
}

/**
 * A codec or processor spec (a name, or `{name, config}`) whose config is
 * checked by the named type's schema. A codec without one takes no config
 * (`false`: no value is valid), as publish says.
 */
function namedWithConfig(registries: Registries, spec: JsonSchema, kind: 'codec' | 'preprocessor' | 'postprocessor'): JsonSchema {
  const branches = (spec.anyOf as JsonSchema[]).map((branch) =>
    branch.type === 'object' ? { ...branch, allOf: configByType(registries, kind, 'name', kind === 'codec' ? false : { type: 'object' }) } : branch,
  );
  return { ...spec, anyOf: branches };
}

/** An onramp or offramp: the artefact schema, its `type` one of the registered names, its `config` by type. */
function ramp(registries: Registries, base: JsonSchema, kind: 'onramp' | 'offramp'): JsonSchema {
  const properties = base.properties as Record<string, JsonSchema>;
  const processors = (field: 'preprocessors' | 'postprocessors', of: 'preprocessor' | 'postprocessor'): JsonSchema => ({
    ...properties[field],
    items: namedWithConfig(registries, properties[field].items as JsonSchema, of),
  });
  return {
    ...base,
    description: `an ${kind} artefact (docs/concepts.md)`,
    properties: {
      ...properties,
      type: { ...properties.type, enum: typeNames(registries, kind) },
      codec: namedWithConfig(registries, properties.codec, 'codec'),
      preprocessors: processors('preprocessors', 'preprocessor'),
      postprocessors: processors('postprocessors', 'postprocessor'),
    },
    allOf: configByType(registries, kind, 'type'),
  };
}

/** A pipeline: each node's `type` one of the registered operators, its `config` by type. */
function pipeline(registries: Registries, base: JsonSchema): JsonSchema {
  const properties = base.properties as Record<string, JsonSchema>;
  const nodes = properties.nodes;
  const node = nodes.items as JsonSchema;
  const nodeProperties = node.properties as Record<string, JsonSchema>;
  const typedNode = {
    ...node,
    properties: { ...nodeProperties, type: { ...nodeProperties.type, enum: typeNames(registries, 'operator') } },
    allOf: configByType(registries, 'operator', 'type'),
  };
  return { ...base, description: 'a pipeline artefact: a graph of operators', properties: { ...properties, nodes: { ...nodes, items: typedNode } } };
}

/** One id or a list of them, as a flow's from, via, to and err take. */
const ids = (description: string): JsonSchema => ({
  description,
  anyOf: [
    { type: 'string', minLength: 1 },
    { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
  ],
});

const FLOW: JsonSchema = {
  type: 'object',
  description: 'a flow in a few lines, expanded into a binding and a mapping (docs/config-files.md)',
  additionalProperties: false,
  required: ['id', 'from', 'to'],
  properties: {
    id: { type: 'string', minLength: 1, description: "the binding's id" },
    from: ids("onramp id(s): each one's out feeds the first pipeline"),
    via: ids("pipeline id(s), chained in order (one's out to the next one's in); system::passthrough when absent"),
    to: ids("offramp id(s) the last pipeline's out feeds"),
    err: ids("offramp id(s) every err port of the flow feeds: each onramp's and each pipeline's"),
    instance: { type: 'string', minLength: 1, description: 'the instance activated; main when absent' },
  },
};

const MAPPING: JsonSchema = {
  type: ['object', 'null'],
  description: 'activations: /binding/<binding>/<instance>: {placeholder: value}',
  propertyNames: { pattern: MAPPING_KEY.source },
  additionalProperties: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
};

/**
 * The schema of a pipeline file: one pipeline artefact by itself, as a case
 * file of `eddy test` names it (`pipeline: pipelines/batch.yaml`).
 */
export function pipelineFileSchema(registries: Registries): JsonSchema {
  const { definitions, $schema } = configFileSchema(registries) as { definitions: Record<string, JsonSchema>; $schema: string };
  return { $schema, title: 'eddy pipeline file', ...definitions.pipeline };
}

/** The schema of a config file whose types are those of `registries`. */
export function configFileSchema(registries: Registries): JsonSchema {
  const artefacts = artefactSchemas({
    codecs: typeNames(registries, 'codec'),
    preprocessors: typeNames(registries, 'preprocessor'),
    postprocessors: typeNames(registries, 'postprocessor'),
  });
  const definitions: Record<string, JsonSchema> = {
    pipeline: pipeline(registries, artefacts.pipeline),
    onramp: ramp(registries, artefacts.onramp, 'onramp'),
    offramp: ramp(registries, artefacts.offramp, 'offramp'),
    binding: { ...artefacts.binding, description: 'a binding artefact: links from ports to ports' },
    flow: FLOW,
  };
  const list = (kind: string): JsonSchema => ({ type: ['array', 'null'], items: { $ref: `#/definitions/${kind}` } });
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'eddy config file',
    description: 'the file eddy server run -f reads: artefacts by section, then the mappings to activate (docs/config-files.md)',
    type: 'object',
    additionalProperties: false,
    properties: {
      ...Object.fromEntries(SECTIONS.map((kind) => [kind, list(kind)])),
      mapping: MAPPING,
      flow: list('flow'),
    },
    definitions,
  };
}
