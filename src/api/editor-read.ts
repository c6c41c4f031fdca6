/**
 * POST /editor/read: a config document as the console's flow editor draws
 * it (ui/js/editor/import.js). The page has no YAML parser of its own: it
 * sends the file as it is (YAML or JSON) and gets back the artefacts with
 * everything spelled out that the file may leave implicit: `flow` entries
 * as bindings (config/flow.ts, as a load expands them), each pipeline's
 * `interface` and `links` (a pipeline without links chains its nodes, as a
 * publish stores it), every link end with its port, and the artefacts the
 * bindings name that the file does not declare (`system::stdout`, or a
 * running flow's pipeline) taken from this server, secrets masked as GET
 * shows them. Nothing is stored, published or activated; the nodes' configs
 * are not checked here (the editor checks each node as it draws it).
 */
import { configDocument, type ConfigFile } from '../config/load';
import { invalid } from '../core/errors';
import type { Runtime } from '../runtime/runtime';
import type { JsonSchema } from '../schema/json-schema';
import type { Operation } from './operation';

type Json = Record<string, unknown>;
type RampKind = 'onramp' | 'offramp';
const RAMPS: readonly RampKind[] = ['onramp', 'offramp'];

/** One end of a binding's link, its port explicit (`/onramp/in/{instance}` is port `out`). */
interface End {
  kind: string;
  id: string;
  instance: string;
  port: string;
}

function end(url: string, side: 'source' | 'destination', where: string): End {
  const [empty, kind, id, instance, port, ...rest] = url.replace(/^svc:\/\/[^/]*/, '').split('/') as (string | undefined)[];
  if (empty !== '' || !kind || !id || instance === undefined || rest.length)
    throw invalid(`${where}: '${url}' is not of the form /kind/artefact/instance[/port]`);
  return { kind, id, instance, port: port ?? (side === 'source' ? 'out' : 'in') };
}

/** The pipeline as a publish would store it; a pipeline the repository refuses keeps what it says (chained in order when it has no links). */
function spelledOut(runtime: Runtime, pipeline: Json): Json {
  try {
    return runtime.repository.validate('pipeline', pipeline) as unknown as Json;
  } catch {
    const nodes = Array.isArray(pipeline.nodes) ? (pipeline.nodes as Json[]) : [];
    const ids = nodes.map((n) => String(n.id));
    const chain = Object.fromEntries(['in', ...ids].map((from, i) => [from, [ids[i] ?? 'out']]));
    return { interface: { inputs: ['in'], outputs: ['out', 'err'] }, ...pipeline, nodes, links: pipeline.links ?? chain };
  }
}

export function readDocument(runtime: Runtime, body: unknown): Json {
  const doc = body as Json | null;
  const pipelineFile = doc !== null && typeof doc === 'object' && !Array.isArray(doc) && 'nodes' in doc;
  const config: ConfigFile = pipelineFile ? { pipeline: [doc] } : configDocument(doc, '');
  const sections: Record<string, Json[]> = {
    onramp: (config.onramp ?? []) as Json[],
    offramp: (config.offramp ?? []) as Json[],
    pipeline: ((config.pipeline ?? []) as Json[]).map((p) => spelledOut(runtime, p)),
  };
  const bindings = ((config.binding ?? []) as Json[]).map((b, i) => {
    const links = Object.entries((b.links ?? {}) as Record<string, unknown>).map(([src, dsts]) => ({
      from: end(src, 'source', `binding[${i}].links`),
      to: (Array.isArray(dsts) ? dsts : [dsts]).map((d) => end(String(d), 'destination', `binding[${i}].links.${src}`)),
    }));
    return { id: b.id, links };
  });
  // what the links name that the file does not declare: this server's artefact (a system one, a running flow's), or missing
  const fromServer: { kind: string; id: string; system: boolean }[] = [];
  const missing: string[] = [];
  for (const { kind, id } of bindings.flatMap((b) => b.links.flatMap((l) => [l.from, ...l.to]))) {
    const list = Object.hasOwn(sections, kind) ? sections[kind] : undefined; // a kind the file has no section for (or 'constructor') is not one
    if (!list || list.some((a) => a.id === id) || missing.includes(`${kind} ${id}`)) continue;
    const k = kind as RampKind | 'pipeline';
    if (!runtime.repository.has(k, id)) {
      missing.push(`${kind} ${id}`);
      continue;
    }
    list.push(runtime.repository.redacted(k, runtime.repository.get(k, id)) as unknown as Json);
    fromServer.push({ kind, id, system: runtime.repository.isSystem(k, id) });
  }
  const pipelines = sections.pipeline.filter((p) => !fromServer.some((s) => s.kind === 'pipeline' && s.id === p.id && s.system));
  const name = pipelines.length === 1 ? pipelines[0].id : (bindings[0]?.id ?? pipelines[0]?.id ?? 'flow');
  return { name, ...Object.fromEntries(RAMPS.map((k) => [k, sections[k]])), pipeline: sections.pipeline, binding: bindings, from_server: fromServer, missing };
}

export function readOperation(runtime: Runtime): Operation {
  return {
    method: 'post',
    path: '/editor/read',
    operationId: 'read_config_document',
    summary: "Read a config file (or a pipeline file) as the console's editor draws it: flows expanded, links spelled out; nothing is stored",
    tag: 'types',
    jsonOnly: true,
    body: { schema: 'config_document', required: true, description: 'a config file: its sections, or a pipeline artefact (a pipeline file of `eddy test`)' },
    responses: {
      200: { description: 'the document spelled out', schema: 'read_document' },
      400: { description: 'not a config document (the message names what)' },
    },
    run: (input) => ({ status: 200, body: readDocument(runtime, input.body) }),
  };
}

const END: JsonSchema = {
  type: 'object',
  required: ['kind', 'id', 'instance', 'port'],
  properties: { kind: { type: 'string' }, id: { type: 'string' }, instance: { type: 'string' }, port: { type: 'string' } },
};

export const READ_SCHEMAS: Record<string, JsonSchema> = {
  config_document: { type: 'object', description: 'a config file (docs/config-files.md) or a pipeline artefact' },
  read_document: {
    type: 'object',
    required: ['name', 'onramp', 'offramp', 'pipeline', 'binding', 'from_server', 'missing'],
    properties: {
      name: { type: 'string', description: 'a name for the flow: its one pipeline, else its first binding' },
      onramp: { type: 'array', items: { type: 'object' } },
      offramp: { type: 'array', items: { type: 'object' } },
      pipeline: { type: 'array', items: { type: 'object' }, description: 'each with its interface and links spelled out' },
      binding: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            links: { type: 'array', items: { type: 'object', properties: { from: END, to: { type: 'array', items: END } } } },
          },
        },
      },
      from_server: {
        type: 'array',
        items: { type: 'object', properties: { kind: { type: 'string' }, id: { type: 'string' }, system: { type: 'boolean' } } },
        description: 'artefacts the bindings name that the document does not declare, taken from this server (secrets masked)',
      },
      missing: { type: 'array', items: { type: 'string' }, description: 'artefacts the bindings name that neither the document nor the server has' },
    },
  },
};
