/**
 * The `flow` section of a config file: a flow in a few lines, expanded
 * into an ordinary binding and mapping before anything else reads the file
 * (so the API shows, reloads compare and `--data-dir` stores them like any
 * other; docs/config-files.md).
 *
 *   flow:
 *     - id: counts        # the binding's id
 *       from: in          # onramp id(s)
 *       via: per_app      # pipeline id(s), chained out -> in; default system::passthrough
 *       to: out           # offramp id(s) the last pipeline's out feeds
 *       err: errors       # optional: offramp(s) every err port of the flow feeds (the onramps', each pipeline's)
 *       instance: main    # optional: the instance activated (default main)
 */
import { invalid } from '../core/errors';
import { didYouMean } from '../core/suggest';
import type { JsonSchema } from '../schema/json-schema';
import { at, type ConfigFile } from './declared';

const ids = (what: string): JsonSchema => ({
  anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1 }],
  description: what,
});

/** A flow entry, as the OpenAPI document of `POST /config` describes it (expandFlow checks an entry with messages of its own). */
export const FLOW_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'from', 'to'],
  description: 'a binding and its mapping in a few lines (docs/config-files.md)',
  properties: {
    id: { type: 'string', description: "the binding's id" },
    from: ids("onramp id(s): each one's out feeds the first pipeline"),
    via: ids('pipeline id(s), chained out -> in; system::passthrough when absent'),
    to: ids("offramp id(s) the last pipeline's out feeds"),
    err: ids('offramp id(s) that every err port of the flow feeds'),
    instance: { type: 'string', description: 'the instance activated; main when absent' },
  },
};

const KEYS = Object.keys(FLOW_SCHEMA.properties as object);
const PASSTHROUGH = 'system::passthrough';

/** The file's config with each `flow` entry added as a binding and a mapping (and `flow` gone). */
export function expandFlows(path: string, config: ConfigFile & { flow?: unknown }): ConfigFile {
  const { flow, ...rest } = config;
  if (flow === undefined || flow === null) return rest;
  if (!Array.isArray(flow)) throw invalid(at(path, 'flow must be a list of flows'));
  const bindings = [...(rest.binding ?? [])];
  const mapping = { ...(rest.mapping ?? {}) };
  for (const [i, entry] of flow.entries()) {
    const { binding, key } = expandFlow(path, i, entry);
    const where = at(path, `flow '${binding.id}'`);
    if (bindings.some((b) => (b as { id?: unknown } | null)?.id === binding.id))
      throw invalid(`${where}: a binding '${binding.id}' is declared in this ${path === '' ? 'body' : 'file'} already`);
    if (key in mapping) throw invalid(`${where}: the mapping '${key}' is declared in this ${path === '' ? 'body' : 'file'} already`);
    bindings.push(binding);
    mapping[key] = {};
  }
  return { ...rest, binding: bindings, mapping };
}

function expandFlow(path: string, index: number, entry: unknown): { binding: { id: string; links: Record<string, string[]> }; key: string } {
  const where = at(path, `flow #${index + 1}`);
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw invalid(`${where}: a flow is a map {id, from, via, to, err}`);
  const e = entry as Record<string, unknown>;
  for (const k of Object.keys(e)) if (!KEYS.includes(k)) throw invalid(`${where}: unknown field '${k}'${didYouMean(k, KEYS)} (fields: ${KEYS.join(', ')})`);
  if (typeof e.id !== 'string' || e.id === '') throw invalid(`${where}: id: the binding's id, a string, is required`);
  const flowAt = at(path, `flow '${e.id}'`);
  const named = (field: string, required: boolean): string[] => {
    const value = e[field];
    if (value === undefined && !required) return [];
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || list.length === 0 || !list.every((v) => typeof v === 'string' && v !== '')) {
      throw invalid(`${flowAt}: ${field}: ${required ? 'required: ' : ''}an id or a list of ids`);
    }
    return list as string[];
  };
  const from = named('from', true);
  const to = named('to', true);
  const via = named('via', false);
  const pipelines = via.length > 0 ? via : [PASSTHROUGH];
  const errs = named('err', false);
  const instance = e.instance ?? 'main';
  if (typeof instance !== 'string' || instance === '') throw invalid(`${flowAt}: instance: a string`);
  const onramp = (id: string, port: string) => `/onramp/${id}/{instance}/${port}`;
  const pipeline = (id: string, port: string) => `/pipeline/${id}/{instance}/${port}`;
  const offramp = (id: string) => `/offramp/${id}/{instance}/in`;
  const links: Record<string, string[]> = {};
  for (const id of from) links[onramp(id, 'out')] = [pipeline(pipelines[0], 'in')];
  for (let i = 0; i + 1 < pipelines.length; i++) links[pipeline(pipelines[i], 'out')] = [pipeline(pipelines[i + 1], 'in')];
  links[pipeline(pipelines[pipelines.length - 1], 'out')] = to.map(offramp);
  if (errs.length > 0) {
    for (const id of from) links[onramp(id, 'err')] = errs.map(offramp);
    for (const id of pipelines) links[pipeline(id, 'err')] = errs.map(offramp);
  }
  return { binding: { id: e.id, links }, key: `/binding/${e.id}/${instance}` };
}
