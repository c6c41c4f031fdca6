// The Graph view, as SVG: the binding graph (onramps → pipelines → offramps)
// with each instance's state and each link's events/s, and, for a clicked
// pipeline, its nodes between its input and output ports.
import { api, instancePath, parseUrl } from './api.js';
import { $, s } from './dom.js';
import { countsOf, formatRate, Rates } from './rates.js';

const NODE_W = 210;
const NODE_H = 58;
const COL_GAP = 90;
const ROW_GAP = 22;
const PAD = 30;

/**
 * Columns by longest path from the sources: `fixed` pins a node to a column
 * (onramps first, offramps last); a cycle cannot loop because a node moves
 * right at most once per node.
 */
function columns(ids, edges, fixed) {
  const col = new Map(ids.map((id) => [id, fixed(id) ?? 0]));
  for (let round = 0; round < ids.length; round++) {
    let moved = false;
    for (const { from, to } of edges) {
      if (fixed(to) !== undefined) continue;
      if (col.get(to) <= col.get(from)) {
        col.set(to, col.get(from) + 1);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return col;
}

/** nodes: [{ id, label, sub, cls, col, state? }], edges: [{ from, to, label, source? }]; `state`: draw a state line, `source`: a rate label */
function draw(container, nodes, edges, onClick) {
  if (nodes.length === 0) {
    container.replaceChildren(s('svg', { width: 400, height: 60 }, s('text', { x: PAD, y: 35, class: 'sub' }, 'nothing to draw')));
    return;
  }
  const byCol = new Map();
  for (const n of nodes) byCol.set(n.col, [...(byCol.get(n.col) ?? []), n]);
  const cols = [...byCol.keys()].sort((a, b) => a - b);
  const rowsMax = Math.max(...[...byCol.values()].map((c) => c.length));
  const height = PAD * 2 + rowsMax * NODE_H + (rowsMax - 1) * ROW_GAP;
  const width = PAD * 2 + cols.length * NODE_W + (cols.length - 1) * COL_GAP;
  const at = new Map();
  cols.forEach((c, ci) => {
    const column = byCol.get(c);
    const top = (height - (column.length * NODE_H + (column.length - 1) * ROW_GAP)) / 2;
    column.forEach((n, ri) => at.set(n.id, { x: PAD + ci * (NODE_W + COL_GAP), y: top + ri * (NODE_H + ROW_GAP) }));
  });
  const links = edges
    .filter((e) => at.has(e.from) && at.has(e.to))
    .map((e) => {
      const a = at.get(e.from);
      const b = at.get(e.to);
      const x1 = a.x + NODE_W;
      const y1 = a.y + NODE_H / 2;
      const x2 = b.x;
      const y2 = b.y + NODE_H / 2;
      const bend = Math.max(40, (x2 - x1) / 2);
      const ends = { 'data-from': e.from, 'data-to': e.to };
      const path = s('path', { d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`, 'marker-end': 'url(#arrow)', ...ends }, s('title', {}, e.label ?? ''));
      if (!e.source) return path;
      // the curve's middle (a symmetric cubic Bézier passes through the midpoint of its ends)
      const rate = s('text', { class: 'rate', x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 5, 'text-anchor': 'middle', 'data-source': e.source, ...ends }, '- ev/s');
      return [path, rate];
    });
  const boxes = nodes.map((n) => {
    const p = at.get(n.id);
    return s(
      'g',
      { class: `node ${n.cls}`, transform: `translate(${p.x},${p.y})`, 'data-id': n.id, onclick: onClick ? () => onClick(n) : undefined },
      s('rect', { class: 'box', width: NODE_W, height: NODE_H, rx: 6 }),
      s('rect', { class: 'kind-bar', width: 5, height: NODE_H - 12, x: 0, y: 6 }),
      s('text', { x: 12, y: 18 }, n.label.length > 27 ? `${n.label.slice(0, 26)}…` : n.label),
      s('text', { x: 12, y: 33, class: 'sub' }, n.sub),
      n.state ? s('text', { x: 12, y: 49, class: 'state' }, '') : null,
      s('title', {}, n.id),
    );
  });
  const arrow = s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, s('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#8a93a6' })));
  container.replaceChildren(s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' }, arrow, links.flat(), boxes));
}

const nodeOf = (url) => {
  const { kind, artefact, instance } = parseUrl(url);
  return `/${kind}/${artefact}/${instance}`;
};

/** The links of every running binding instance, or of every published binding when none runs. */
async function bindingLinks(status) {
  const running = status.instances.filter((i) => i.kind === 'binding');
  if (running.length) {
    const bound = await Promise.all(running.map((i) => api('GET', `/binding/${i.artefact}/${i.instance}`)));
    return bound.map((b) => b.links);
  }
  const published = await Promise.all(status.artefacts.binding.map((id) => api('GET', `/binding/${id}`)));
  return published.map((p) => p.artefact.links);
}

/** `/onramp/a/main/out` → the key of that port's counts in /status (a link's source is always an outgoing port) */
const sourceKey = (url) => {
  const { port } = parseUrl(url);
  return `${nodeOf(url)}#out:${port}`;
};

export async function drawBindingGraph(status) {
  const edges = [];
  const ids = new Set();
  for (const links of await bindingLinks(status)) {
    for (const [from, targets] of Object.entries(links)) {
      for (const to of targets) {
        edges.push({ from: nodeOf(from), to: nodeOf(to), label: `${parseUrl(from).port} → ${parseUrl(to).port}`, source: sourceKey(from) });
        ids.add(nodeOf(from));
        ids.add(nodeOf(to));
      }
    }
  }
  const kindOf = (id) => parseUrl(id).kind;
  const col = columns([...ids], edges, (id) => (kindOf(id) === 'onramp' ? 0 : undefined));
  const last = Math.max(0, ...[...ids].filter((id) => kindOf(id) === 'pipeline').map((id) => col.get(id))) + 1;
  const nodes = [...ids].map((id) => {
    const { kind, artefact, instance } = parseUrl(id);
    return { id, label: artefact, sub: `${kind} · ${instance}`, cls: kind, col: kind === 'offramp' ? last : col.get(id), artefact, state: true };
  });
  draw($('#binding-graph'), nodes, edges, (n) => {
    if (n.cls !== 'pipeline') return;
    for (const g of document.querySelectorAll('#binding-graph .node')) g.classList.toggle('selected', g.dataset.id === n.id);
    void drawPipelineGraph(n.artefact);
  });
  updateBindingGraph(status);
}

// the states a node is drawn in: a class for the colour, and always the words (colour alone says nothing to some)
const STATE_TEXT = { running: 'running', paused: 'paused by breaker', down: 'down', failed: 'failed' };
const STATES = [...Object.keys(STATE_TEXT), 'stopped'];

const rates = new Rates();

/** Every poll: the binding graph's node states and link rates from this /status answer, in place. */
export function updateBindingGraph(status) {
  const sample = rates.sample(countsOf(status, instancePath));
  showStates(status);
  if (sample.rerate) showRates(sample);
}

function showStates(status) {
  const byPath = new Map(status.instances.map((i) => [instancePath(i), i]));
  for (const g of document.querySelectorAll('#binding-graph g.node')) {
    const instance = byPath.get(g.dataset.id);
    const state = instance?.state ?? 'stopped';
    const breakerOpen = instance?.breaker === 'open';
    for (const name of STATES) g.classList.toggle(name, name === state);
    g.classList.toggle('breaker-open', breakerOpen);
    g.dataset.state = state;
    g.dataset.breaker = instance?.breaker ?? '';
    const words = instance ? STATE_TEXT[state] ?? state : 'not running';
    // paused already says the breaker; an offramp's open breaker holds its sources back
    g.querySelector('text.state').textContent = breakerOpen && state !== 'paused' ? `${words} · breaker open` : words;
    g.querySelector('title').textContent = `${g.dataset.id}: ${words}${instance?.reason ? ` (${instance.reason})` : ''}`;
  }
}

function showRates(sample) {
  for (const label of document.querySelectorAll('#binding-graph text.rate')) {
    label.textContent = `${formatRate(sample.rate(label.dataset.source))} ev/s`;
  }
}

export async function drawPipelineGraph(id) {
  const { artefact } = await api('GET', `/pipeline/${id}`);
  const title = $('#pipeline-title');
  title.textContent = `pipeline ${id}`;
  title.hidden = false;
  const inputs = artefact.interface?.inputs ?? [];
  const outputs = artefact.interface?.outputs ?? [];
  const ids = [...inputs.map((p) => `in:${p}`), ...artefact.nodes.map((n) => n.id), ...outputs.map((p) => `out:${p}`)];
  const isNode = new Set(artefact.nodes.map((n) => n.id));
  // a link end is a node (`a`, `a/port`) or an interface port: an input when it is a source, an output when a target
  const end = (name, asSource) => {
    const node = name.split('/')[0];
    if (isNode.has(node)) return node;
    return asSource ? `in:${node}` : `out:${node}`;
  };
  const edges = [];
  for (const [from, targets] of Object.entries(artefact.links)) {
    for (const to of targets) edges.push({ from: end(from, true), to: end(to, false), label: `${from} → ${to}` });
  }
  const col = columns(ids, edges, (n) => (n.startsWith('in:') ? 0 : undefined));
  const last = Math.max(1, ...artefact.nodes.map((n) => col.get(n.id))) + 1;
  const nodes = [
    ...inputs.map((p) => ({ id: `in:${p}`, label: p, sub: 'input port', cls: 'port', col: 0 })),
    ...artefact.nodes.map((n) => ({ id: n.id, label: n.id, sub: n.type, cls: 'operator', col: Math.max(1, col.get(n.id)) })),
    ...outputs.map((p) => ({ id: `out:${p}`, label: p, sub: 'output port', cls: 'port', col: last })),
  ];
  draw($('#pipeline-graph'), nodes, edges);
}
