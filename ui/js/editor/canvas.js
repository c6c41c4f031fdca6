// The editor's canvas: hand-written SVG (no library). Nodes with their
// ports, wires as curves; drag a node to move it (the selected ones move
// together), drag from an output port to an input port to wire them, drag
// the background to pan (shift: select a rectangle), wheel to zoom.
import { s } from '../dom.js';
import { linked } from './model.js';

export const NODE_W = 190;
const HEAD_H = 46; // title and type lines
const PORT_H = 18; // one output port's row
const PORT_R = 6;

/** A node's height: its header and one row per output port. */
export const nodeHeight = (node) => HEAD_H + Math.max(1, node.outputs?.length ?? 1) * PORT_H;

/** Where a port sits, in canvas units. */
export function portAt(node, port, direction) {
  if (direction === 'in') return { x: node.x, y: node.y + HEAD_H / 2 + 4 };
  const outputs = node.outputs ?? ['out'];
  const i = Math.max(0, outputs.indexOf(port));
  return { x: node.x + NODE_W, y: node.y + HEAD_H + i * PORT_H + PORT_H / 2 - 4 };
}

const curve = (a, b) => {
  const bend = Math.max(40, Math.abs(b.x - a.x) / 2);
  return `M${a.x},${a.y} C${a.x + bend},${a.y} ${b.x - bend},${b.y} ${b.x},${b.y}`;
};

export const wireKey = (w) => `${w.from}/${w.port}>${w.to}`;

export class Canvas {
  view = { x: 0, y: 0, k: 1 };
  selected = new Set(); // node ids
  selectedWire = null; // wireKey
  #svg;
  #layer;
  #flow;
  #on;
  #drag = null;

  /** on: { select(), wireClicked(wire), refused(message), dropped(kind, type, x, y) } */
  constructor(svg, flow, on) {
    this.#svg = svg;
    this.#flow = flow;
    this.#on = on;
    this.#layer = s('g', { class: 'viewport' });
    svg.append(
      s('defs', {}, s('marker', { id: 'wire-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto' }, s('path', { d: 'M0,0 L10,5 L0,10 z' }))),
      this.#layer,
    );
    svg.addEventListener('pointerdown', (e) => this.#down(e));
    svg.addEventListener('pointermove', (e) => this.#move(e));
    svg.addEventListener('pointerup', (e) => this.#up(e));
    svg.addEventListener('wheel', (e) => this.#wheel(e), { passive: false });
    svg.addEventListener('dragover', (e) => e.preventDefault());
    svg.addEventListener('drop', (e) => {
      e.preventDefault();
      const [kind, type] = (e.dataTransfer.getData('text/plain') || '').split(' ');
      const at = this.toCanvas(e);
      if (kind && type) on.dropped(kind, type, at.x - NODE_W / 2, at.y - HEAD_H / 2);
    });
  }

  /** A pointer event's position in canvas units. */
  toCanvas(e) {
    const box = this.#svg.getBoundingClientRect();
    return { x: (e.clientX - box.left - this.view.x) / this.view.k, y: (e.clientY - box.top - this.view.y) / this.view.k };
  }

  /** Where a new node goes when it is not dropped: right of the others, in view. */
  freeSpot() {
    const nodes = [...this.#flow.nodes.values()];
    const box = this.#svg.getBoundingClientRect();
    const left = (-this.view.x + 40) / this.view.k;
    const top = (-this.view.y + 40) / this.view.k;
    for (let row = 0; ; row++) {
      for (let col = 0; col < Math.max(1, Math.floor(box.width / this.view.k / (NODE_W + 60))); col++) {
        const x = left + col * (NODE_W + 60);
        const y = top + row * 110;
        if (!nodes.some((n) => Math.abs(n.x - x) < NODE_W && Math.abs(n.y - y) < 90)) return { x, y };
      }
    }
  }

  zoom(factor, cx = this.#svg.clientWidth / 2, cy = this.#svg.clientHeight / 2) {
    const k = Math.min(3, Math.max(0.15, this.view.k * factor));
    this.view.x = cx - ((cx - this.view.x) * k) / this.view.k;
    this.view.y = cy - ((cy - this.view.y) * k) / this.view.k;
    this.view.k = k;
    this.#applyView();
  }

  /** Zooms and pans so every node is in view. */
  fit() {
    const nodes = [...this.#flow.nodes.values()];
    if (!nodes.length) {
      this.view = { x: 0, y: 0, k: 1 };
      return this.#applyView();
    }
    const x0 = Math.min(...nodes.map((n) => n.x)) - 30;
    const y0 = Math.min(...nodes.map((n) => n.y)) - 30;
    const x1 = Math.max(...nodes.map((n) => n.x + NODE_W)) + 30;
    const y1 = Math.max(...nodes.map((n) => n.y + nodeHeight(n))) + 30;
    const k = Math.min(1.2, this.#svg.clientWidth / (x1 - x0), this.#svg.clientHeight / (y1 - y0));
    this.view = { k, x: -x0 * k, y: -y0 * k };
    this.#applyView();
  }

  #applyView() {
    this.#layer.setAttribute('transform', `translate(${this.view.x},${this.view.y}) scale(${this.view.k})`);
  }

  /** Draws the flow again (cheap: a few hundred elements for 50 nodes). */
  draw() {
    const flow = this.#flow;
    for (const id of this.selected) if (!flow.nodes.has(id)) this.selected.delete(id);
    const wires = flow.wires
      .filter((w) => flow.nodes.has(w.from) && flow.nodes.has(w.to))
      .map((w) => {
        const a = portAt(flow.nodes.get(w.from), w.port, 'out');
        const b = portAt(flow.nodes.get(w.to), 'in', 'in');
        const key = wireKey(w);
        const label = `${w.from} ${w.port} → ${w.to}`;
        return s(
          'g',
          { class: `wire${key === this.selectedWire ? ' selected' : ''}${w.port === 'err' ? ' err' : ''}`, 'data-wire': key, 'data-from': w.from, 'data-port': w.port, 'data-to': w.to },
          s('path', { class: 'hit', d: curve(a, b) }),
          s('path', { class: 'line', d: curve(a, b), 'marker-end': 'url(#wire-arrow)' }),
          s('text', { class: 'wire-rate', x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 6, 'text-anchor': 'middle' }, ''),
          s('title', {}, label),
        );
      });
    const nodes = [...flow.nodes.values()].map((n) => this.#node(n));
    this.#layer.replaceChildren(...wires, ...nodes);
    this.#applyView();
  }

  #node(n) {
    const height = nodeHeight(n);
    const outputs = n.outputs ?? ['out'];
    const ports = [];
    if (n.kind !== 'onramp' || linked(n)) ports.push(s('circle', { class: 'port in', cx: 0, cy: HEAD_H / 2 + 4, r: PORT_R, 'data-port': 'in' }, s('title', {}, `${n.id} input in`)));
    if (n.kind !== 'offramp' || n.outputs?.length) {
      outputs.forEach((port, i) => {
        const y = HEAD_H + i * PORT_H + PORT_H / 2 - 4;
        ports.push(
          s('text', { class: 'port-label', x: NODE_W - 12, y: y + 4, 'text-anchor': 'end' }, port),
          s('circle', { class: `port out${port === 'err' ? ' err' : ''}`, cx: NODE_W, cy: y, r: PORT_R, 'data-port': port }, s('title', {}, `${n.id} output ${port}: drag to an input`)),
        );
      });
      if (n.outputs === null) ports.push(s('text', { class: 'port-label', x: NODE_W - 12, y: HEAD_H + PORT_H + 6, 'text-anchor': 'end' }, 'any port (routed)'));
    }
    const cls = ['enode', n.kind, this.selected.has(n.id) ? 'selected' : '', n.error ? 'invalid' : ''].join(' ');
    return s(
      'g',
      { class: cls, transform: `translate(${n.x},${n.y})`, 'data-id': n.id, 'data-kind': n.kind, 'aria-label': `${n.kind} ${n.id} (${n.type})${n.error ? `: ${n.error}` : ''}` },
      s('rect', { class: 'box', width: NODE_W, height, rx: 6 }),
      s('rect', { class: 'kind-bar', width: 5, height: height - 12, x: 0, y: 6 }),
      s('text', { x: 12, y: 18, class: 'title' }, n.id.length > 22 ? `${n.id.slice(0, 21)}…` : n.id),
      s('text', { x: 12, y: 33, class: 'sub' }, `${n.kind} · ${n.type}`),
      s('text', { x: 12, y: HEAD_H + 10, class: 'count' }, ''),
      n.error ? s('text', { x: NODE_W - 10, y: 18, class: 'mark', 'text-anchor': 'end' }, '⚠') : null,
      s('title', {}, n.error ? `${n.id}: ${n.error}` : `${n.id} (${n.type})`),
      ports,
    );
  }

  #down(e) {
    const portEl = e.target.closest('circle.port.out');
    const nodeEl = e.target.closest('g.enode');
    const wireEl = e.target.closest('g.wire');
    const at = this.toCanvas(e);
    this.#svg.setPointerCapture(e.pointerId);
    if (portEl && nodeEl) {
      const from = nodeEl.dataset.id;
      const start = portAt(this.#flow.nodes.get(from), portEl.dataset.port, 'out');
      const ghost = s('path', { class: 'ghost', d: curve(start, at) });
      this.#layer.append(ghost);
      this.#drag = { mode: 'wire', from, port: portEl.dataset.port, start, ghost };
    } else if (nodeEl) {
      const id = nodeEl.dataset.id;
      if (e.shiftKey || e.ctrlKey || e.metaKey) {
        if (this.selected.has(id)) this.selected.delete(id);
        else this.selected.add(id);
      } else if (!this.selected.has(id)) this.selected = new Set([id]);
      this.selectedWire = null;
      this.#drag = { mode: 'move', at, dx: 0, dy: 0 };
      this.draw();
      this.#on.select();
    } else if (wireEl) {
      this.selectedWire = wireEl.dataset.wire;
      this.selected.clear();
      this.draw();
      this.#on.wireClicked(this.#flow.wires.find((w) => wireKey(w) === this.selectedWire));
    } else if (e.shiftKey) {
      const rect = s('rect', { class: 'band', x: at.x, y: at.y, width: 0, height: 0 });
      this.#layer.append(rect);
      this.#drag = { mode: 'band', at, rect };
    } else {
      this.#drag = { mode: 'pan', x: e.clientX, y: e.clientY, view: { ...this.view }, moved: false };
    }
  }

  #move(e) {
    const d = this.#drag;
    if (!d) return;
    const at = this.toCanvas(e);
    if (d.mode === 'wire') d.ghost.setAttribute('d', curve(d.start, at));
    else if (d.mode === 'move') {
      d.dx = at.x - d.at.x;
      d.dy = at.y - d.at.y;
      for (const id of this.selected) {
        const n = this.#flow.nodes.get(id);
        this.#layer.querySelector(`g.enode[data-id="${CSS.escape(id)}"]`)?.setAttribute('transform', `translate(${n.x + d.dx},${n.y + d.dy})`);
      }
    } else if (d.mode === 'band') {
      d.rect.setAttribute('x', Math.min(at.x, d.at.x));
      d.rect.setAttribute('y', Math.min(at.y, d.at.y));
      d.rect.setAttribute('width', Math.abs(at.x - d.at.x));
      d.rect.setAttribute('height', Math.abs(at.y - d.at.y));
      d.to = at;
    } else {
      d.moved = true;
      this.view.x = d.view.x + e.clientX - d.x;
      this.view.y = d.view.y + e.clientY - d.y;
      this.#applyView();
    }
  }

  #up(e) {
    const d = this.#drag;
    this.#drag = null;
    if (!d) return;
    if (d.mode === 'wire') {
      d.ghost.remove();
      // the pointer is captured by the svg: find what lies under it
      const under = document.elementFromPoint(e.clientX, e.clientY);
      const target = under?.closest('g.enode');
      if (target && under.closest('circle.port.in, g.enode')) {
        const why = this.#flow.connect(d.from, d.port, target.dataset.id);
        if (why) this.#on.refused(why);
      }
    } else if (d.mode === 'move') {
      if (d.dx || d.dy) this.#flow.move([...this.selected], d.dx, d.dy);
    } else if (d.mode === 'band') {
      d.rect.remove();
      const to = d.to ?? d.at;
      const [x0, x1] = [Math.min(d.at.x, to.x), Math.max(d.at.x, to.x)];
      const [y0, y1] = [Math.min(d.at.y, to.y), Math.max(d.at.y, to.y)];
      this.selected = new Set([...this.#flow.nodes.values()].filter((n) => n.x < x1 && n.x + NODE_W > x0 && n.y < y1 && n.y + nodeHeight(n) > y0).map((n) => n.id));
      this.draw();
      this.#on.select();
    } else if (!d.moved) {
      this.selected.clear();
      this.selectedWire = null;
      this.draw();
      this.#on.select();
    }
  }

  #wheel(e) {
    e.preventDefault();
    const box = this.#svg.getBoundingClientRect();
    this.zoom(e.deltaY < 0 ? 1.1 : 1 / 1.1, e.clientX - box.left, e.clientY - box.top);
  }
}
