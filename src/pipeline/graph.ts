import { invalid, present } from '../core/errors';
import type { operatorCatalog } from './operators/catalog';

/**
 * The name of a builtin operator type (`runtime::cel`, `generic::batch`, ...),
 * read from the operator catalog so the two cannot drift apart.
 */
export type BuiltinOperatorName = (typeof operatorCatalog)[number]['name'];

/**
 * A node's operator type: a builtin name, which editors complete, or the name
 * of a type registered with `registerOperator`. `string & {}` keeps the
 * builtin names in the completion list while still accepting any other name:
 * an unknown name is refused when the pipeline is validated, naming the node.
 */
export type OperatorName = BuiltinOperatorName | (string & {});

/** A node of a pipeline artefact, as the schema describes it. */
export interface PipelineNode {
  id: string;
  type: OperatorName;
  config?: Record<string, unknown>;
  description?: string;
}

/**
 * A pipeline artefact as written and published (the schema of
 * schema/artefacts.ts, field for field): without `links` its nodes are
 * chained in order, without `interface` it is [in] -> [out, err].
 */
export interface PipelineArtefact {
  id: string;
  description?: string;
  interface?: { inputs?: string[]; outputs?: string[] };
  nodes: PipelineNode[];
  links?: Record<string, string[]>;
  metrics_interval_s?: number;
}

/** A pipeline artefact as the repository stores it: its `interface` and `links` filled in (Repository.validate). */
export interface StoredPipeline extends PipelineArtefact {
  interface: { inputs?: string[]; outputs?: string[] };
  links: Record<string, string[]>;
}

export type Endpoint = { kind: 'input'; name: string } | { kind: 'node'; id: string; port: string } | { kind: 'output'; name: string };

export interface Edge {
  from: Endpoint;
  to: Endpoint;
}

export interface Graph {
  inputs: string[];
  outputs: string[];
  edges: Edge[];
  /** node ids in topological order: every node after all nodes feeding it */
  order: string[];
}

/** Every pipeline can also emit on `err`; `metrics` carries its metrics. */
export const IMPLICIT_OUTPUTS = ['err'];

/**
 * Reads the spec's `links`: a key `node[/port]` (port defaults to `out`) or
 * an interface input; a value `node[/port]` or an interface output. Rejects
 * unknown names, names used both as node and interface, and cycles, with a
 * message naming the link.
 */
export function buildGraph(p: StoredPipeline): Graph {
  const inputs = p.interface.inputs ?? ['in'];
  const outputs = [...new Set([...(p.interface.outputs ?? ['out']), ...IMPLICIT_OUTPUTS])];
  const nodeIds = new Set<string>();
  for (const [i, node] of p.nodes.entries()) {
    if (nodeIds.has(node.id)) throw invalid(`nodes[${i}].id: duplicate node id '${node.id}'`);
    if (inputs.includes(node.id) || outputs.includes(node.id)) {
      throw invalid(`nodes[${i}].id: '${node.id}' is also the name of an interface input or output`);
    }
    nodeIds.add(node.id);
  }
  const edges: Edge[] = [];
  for (const [key, targets] of Object.entries(p.links)) {
    // split gives at least one part
    const [name, port, extra] = key.split('/') as [string, string?, string?];
    let from: Endpoint;
    if (extra !== undefined) throw invalid(`links.${key}: expected 'node' or 'node/port'`);
    if (nodeIds.has(name)) from = { kind: 'node', id: name, port: port ?? 'out' };
    else if (inputs.includes(name) && port === undefined) from = { kind: 'input', name };
    else throw invalid(`links.${key}: '${name}' is neither a node nor an interface input (inputs: ${inputs.join(', ')})`);
    for (const target of targets) {
      const [tname, tport, textra] = target.split('/') as [string, string?, string?];
      if (textra !== undefined) throw invalid(`links.${key}: target '${target}': expected 'node' or 'node/port'`);
      let to: Endpoint;
      if (nodeIds.has(tname)) to = { kind: 'node', id: tname, port: tport ?? 'in' };
      else if (outputs.includes(tname) && tport === undefined) to = { kind: 'output', name: tname };
      else throw invalid(`links.${key}: target '${target}' is neither a node nor an interface output (outputs: ${outputs.join(', ')})`);
      edges.push({ from, to });
    }
  }
  return { inputs, outputs, edges, order: topologicalOrder([...nodeIds], edges) };
}

interface Vertex {
  readonly id: string;
  indegree: number;
  readonly next: Vertex[];
}

function topologicalOrder(nodes: string[], edges: Edge[]): string[] {
  const vertices = new Map(nodes.map((id): [string, Vertex] => [id, { id, indegree: 0, next: [] }]));
  // parsePipeline links only nodes it has checked are there
  const vertex = (id: string) => present(vertices.get(id), `node '${id}'`);
  for (const { from, to } of edges) {
    if (from.kind === 'node' && to.kind === 'node') {
      const target = vertex(to.id);
      vertex(from.id).next.push(target);
      target.indegree++;
    }
  }
  const ready = [...vertices.values()].filter((v) => v.indegree === 0);
  const order: string[] = [];
  for (let v = ready.shift(); v !== undefined; v = ready.shift()) {
    order.push(v.id);
    for (const m of v.next) if (--m.indegree === 0) ready.push(m);
  }
  if (order.length < nodes.length) {
    const cyclic = nodes.filter((n) => !order.includes(n));
    throw invalid(`links: the graph has a cycle through nodes ${cyclic.join(', ')}`);
  }
  return order;
}

/**
 * Refuses a link from a port its node does not have (`once/dupes` for
 * generic::dedupe's `duplicate`): events there would go nowhere. `ports`
 * gives a node's ports besides `out`, or undefined when it may emit on
 * any port (or, for a type that does not say, before the node exists).
 */
export function checkNodePorts(p: StoredPipeline, ports: (nodeId: string) => readonly string[] | undefined): void {
  for (const key of Object.keys(p.links)) {
    const [id, port] = key.split('/') as [string, string?];
    const node = p.nodes.find((n) => n.id === id);
    if (node === undefined || port === undefined || port === 'out') continue;
    const known = ports(id);
    if (known !== undefined && !known.includes(port)) {
      throw invalid(
        `links.${key}: node '${id}' (${node.type}) has no output port '${port}' (ports: ${['out', ...known.filter((k) => k !== 'out')].join(', ')})`,
      );
    }
  }
}
