// Open a config file, or a running flow, onto the canvas. The server reads
// the text (POST /editor/read: YAML or JSON, flows expanded, every
// pipeline's links spelled out, the artefacts its bindings name from the
// server added); here the document becomes nodes and wires: each onramp and
// offramp a node, the operators of every pipeline nodes of the one
// pipeline the canvas holds (an id two pipelines share is prefixed with its
// pipeline's), and each wire the path an event takes from a port to a node
// through the pipelines' interface ports and the bindings. Then a layout:
// onramps left, operators in columns by their longest path from a source,
// sinks right.
import { api } from '../api.js';
import { NODE_W, nodeHeight } from './canvas.js';
import { freshId, ID_RE } from './model.js';

const COL_GAP = 90;
const ROW_GAP = 28;
const MARGIN = 40;

/** `{ id, kind, type, config, codec, extra, outputs, system }` of an onramp or offramp artefact. */
function ramp(kind, artefact, system) {
  const { id, type, config, codec, ...extra } = artefact;
  const linked = extra.linked === true;
  return {
    id,
    kind,
    type,
    config: config ?? {},
    ...(codec === undefined ? {} : { codec }),
    ...(Object.keys(extra).length ? { extra } : {}),
    outputs: kind === 'onramp' ? ['out', 'err'] : linked ? ['out', 'err'] : [],
    ...(system ? { system: true } : {}),
    x: 0,
    y: 0,
    error: null,
  };
}

/**
 * The canvas for a document of POST /editor/read: `{ name, nodes, wires, notes }`
 * (notes: what could not be drawn, in words).
 */
export function fromDocument(doc) {
  const notes = doc.missing.map((m) => `${m} is named by a binding but neither in the file nor on the server: not drawn`);
  const system = new Set(doc.from_server.filter((s) => s.system).map((s) => `${s.kind} ${s.id}`));
  const nodes = [];
  const taken = new Set();
  const place = (node) => {
    nodes.push(node);
    taken.add(node.id);
    return node.id;
  };
  for (const kind of ['onramp', 'offramp']) for (const a of doc[kind]) place(ramp(kind, a, system.has(`${kind} ${a.id}`)));
  // operators: `pipeline id → node id → canvas id`
  const canvasId = new Map();
  for (const p of doc.pipeline) {
    const ids = new Map();
    canvasId.set(p.id, ids);
    for (const n of p.nodes ?? []) {
      const prefixed = `${p.id.replace(/::/g, '_')}_${n.id}`;
      const id = !taken.has(n.id) ? n.id : !taken.has(prefixed) && ID_RE.test(prefixed) ? prefixed : freshId(n.id, taken);
      ids.set(n.id, place({ id, kind: 'operator', type: n.type, config: n.config ?? {}, outputs: ['out'], x: 0, y: 0, error: null }));
    }
  }
  const has = (id) => taken.has(id);
  // the graph of ends: `N id port` a node's output, `T id` a node's input, `I p name` / `O p name` a pipeline's interface port
  const edges = new Map();
  const edge = (from, to) => {
    if (from && to) edges.set(from, [...(edges.get(from) ?? []), to]);
  };
  const sources = []; // the `N …` keys, in the order the document names them
  const source = (key) => {
    if (key?.startsWith('N ') && !sources.includes(key)) sources.push(key);
    return key;
  };
  const bindingEnd = (e, side) => {
    if (e.kind === 'pipeline') return canvasId.has(e.id) ? `${side === 'from' ? 'O' : 'I'} ${e.id} ${e.port}` : undefined;
    if (!has(e.id)) return undefined;
    return side === 'from' ? `N ${e.id} ${e.port}` : `T ${e.id}`;
  };
  for (const b of doc.binding) for (const l of b.links) for (const to of l.to) edge(source(bindingEnd(l.from, 'from')), bindingEnd(to, 'to'));
  for (const p of doc.pipeline) {
    const ids = canvasId.get(p.id);
    for (const [key, targets] of Object.entries(p.links ?? {})) {
      const [node, port = 'out'] = key.split('/');
      const from = ids.has(node) ? source(`N ${ids.get(node)} ${port}`) : `I ${p.id} ${key}`;
      for (const t of targets) {
        const target = t.split('/')[0];
        edge(from, ids.has(target) ? `T ${ids.get(target)}` : `O ${p.id} ${t}`);
      }
    }
  }
  const wires = [];
  for (const key of sources) {
    const [, from, port] = key.split(' ');
    const seen = new Set();
    const walk = (at) => {
      for (const next of edges.get(at) ?? []) {
        if (seen.has(next)) continue;
        seen.add(next);
        if (next.startsWith('T ')) wires.push({ from, port, to: next.slice(2) });
        else walk(next);
      }
    };
    walk(key);
  }
  for (const n of nodes) {
    for (const w of wires) if (w.from === n.id && !n.outputs.includes(w.port)) n.outputs = [...n.outputs, w.port];
  }
  layout(nodes, wires);
  const name = ID_RE.test(doc.name) ? doc.name : 'flow';
  return { name, nodes, wires, notes };
}

/** Columns: onramps first, then each node one right of its furthest feeder; offramps that feed nothing last. Rows ordered by their feeders' rows. */
export function layout(nodes, wires) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const col = new Map(nodes.map((n) => [n.id, n.kind === 'onramp' ? 0 : 1]));
  const into = wires.filter((w) => byId.get(w.to)?.kind !== 'onramp' && byId.has(w.from));
  for (let round = 0; round < nodes.length; round++) {
    let moved = false;
    for (const w of into) {
      if (col.get(w.to) < col.get(w.from) + 1 && col.get(w.from) + 1 <= nodes.length) {
        col.set(w.to, col.get(w.from) + 1);
        moved = true;
      }
    }
    if (!moved) break;
  }
  const sink = (n) => n.kind === 'offramp' && !wires.some((w) => w.from === n.id);
  const last = Math.max(0, ...nodes.filter((n) => !sink(n)).map((n) => col.get(n.id))) + 1;
  for (const n of nodes) if (sink(n)) col.set(n.id, last);
  const row = new Map();
  const columns = [...new Set(nodes.map((n) => col.get(n.id)))].sort((a, b) => a - b);
  for (const c of columns) {
    const here = nodes.filter((n) => col.get(n.id) === c);
    const weight = (n) => {
      const feeders = wires.filter((w) => w.to === n.id && row.has(w.from)).map((w) => row.get(w.from));
      return feeders.length ? feeders.reduce((a, b) => a + b, 0) / feeders.length : Infinity;
    };
    const order = here.map((n, i) => ({ n, i, w: weight(n) })).sort((a, b) => a.w - b.w || a.i - b.i);
    let y = MARGIN;
    order.forEach(({ n }, i) => {
      row.set(n.id, i);
      n.x = MARGIN + c * (NODE_W + COL_GAP);
      n.y = y;
      y += nodeHeight(n) + ROW_GAP;
    });
  }
}

/** Reads `text` (a config file, YAML or JSON) through the server: the canvas it draws. */
export async function readFile(text) {
  const json = /^\s*[{[]/.test(text);
  return fromDocument(await api('POST', '/editor/read', text, json ? 'application/json' : 'application/yaml'));
}

/** The running bindings' instances (GET /status), as `binding/instance` choices. */
export async function runningFlows() {
  const status = await api('GET', '/status');
  return status.instances.filter((i) => i.kind === 'binding').map((i) => ({ binding: i.artefact, instance: i.instance }));
}

/** A running binding with the artefacts it links, as the server has them (GET /binding/ID: `{ artefact, instances }`; the rest through POST /editor/read). */
export async function readRunning(binding) {
  const { artefact } = await api('GET', `/binding/${encodeURIComponent(binding)}`);
  return fromDocument(await api('POST', '/editor/read', { binding: [{ id: artefact.id, links: artefact.links }] }));
}
