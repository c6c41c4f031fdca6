// The flow being edited: nodes (onramps, the pipeline's operators,
// offramps) with their config and position, and the wires between their
// ports; every change goes through here, so undo and redo are snapshots.

const HISTORY = 200; // undo steps kept

/** Artefact and node ids as the API takes them (schema/ids.ts): a lowercase letter, then letters, `_` and `:`. */
export const ID_RE = /^[a-z][a-zA-Z_:]*$/;

/** `window::aggregate` → `aggregate`, then `aggregate_b`, `aggregate_c`… while taken (ids hold no digits). */
export function freshId(type, taken) {
  const base = type.split('::').pop().toLowerCase().replace(/[^a-z_]/g, '_').replace(/^[^a-z]+/, '') || 'node';
  if (!taken.has(base)) return base;
  for (let i = 1; ; i++) {
    let suffix = '';
    for (let n = i; n > 0; n = Math.floor((n - 1) / 26)) suffix = String.fromCharCode(97 + ((n - 1) % 26)) + suffix;
    if (!taken.has(`${base}_${suffix}`)) return `${base}_${suffix}`;
  }
}

/** A linked ramp: an onramp that takes replies, an offramp that answers (`linked: true` in its artefact). */
export const linked = (node) => node.extra?.linked === true;

const ARTICLE = { onramp: 'an onramp', offramp: 'an offramp', operator: 'an operator' };

export class Flow {
  /** Map of id → { id, kind, type, config, x, y, outputs, error } */
  nodes = new Map();
  /** [{ from, port, to }]: `from`'s output `port` into `to`'s input (every node has one input, `in`) */
  wires = [];
  name = 'flow';
  #undo = [];
  #redo = [];
  #listeners = [];

  onChange(listener) {
    this.#listeners.push(listener);
  }

  #changed(what) {
    for (const listener of this.#listeners) listener(what);
  }

  snapshot() {
    return JSON.stringify({ name: this.name, nodes: [...this.nodes.values()], wires: this.wires });
  }

  #restore(text) {
    const { name, nodes, wires } = JSON.parse(text);
    this.name = name;
    this.nodes = new Map(nodes.map((n) => [n.id, n]));
    this.wires = wires;
  }

  /** Runs `change` as one undoable step. */
  edit(change, what = 'graph') {
    const before = this.snapshot();
    change();
    if (this.snapshot() === before) return;
    this.#undo.push(before);
    if (this.#undo.length > HISTORY) this.#undo.shift();
    this.#redo = [];
    this.#changed(what);
  }

  /** Puts a whole flow in place (an import), as one undoable step. */
  replace(name, nodes, wires) {
    this.edit(() => {
      this.name = name;
      this.nodes = new Map(nodes.map((n) => [n.id, n]));
      this.wires = wires;
    });
  }

  canUndo() {
    return this.#undo.length > 0;
  }

  canRedo() {
    return this.#redo.length > 0;
  }

  undo() {
    if (!this.#undo.length) return;
    this.#redo.push(this.snapshot());
    this.#restore(this.#undo.pop());
    this.#changed('graph');
  }

  redo() {
    if (!this.#redo.length) return;
    this.#undo.push(this.snapshot());
    this.#restore(this.#redo.pop());
    this.#changed('graph');
  }

  add(kind, info, x, y) {
    const id = freshId(info.type, new Set(this.nodes.keys()));
    const outputs = kind === 'operator' ? ['out'] : info.outputs;
    this.edit(() => this.nodes.set(id, { id, kind, type: info.type, config: {}, x: Math.round(x), y: Math.round(y), outputs, error: null }));
    return id;
  }

  remove(ids) {
    const gone = new Set(ids);
    this.edit(() => {
      for (const id of gone) this.nodes.delete(id);
      this.wires = this.wires.filter((w) => !gone.has(w.from) && !gone.has(w.to));
    });
  }

  removeWire(wire) {
    this.edit(() => (this.wires = this.wires.filter((w) => w !== wire && !(w.from === wire.from && w.port === wire.port && w.to === wire.to))));
  }

  move(ids, dx, dy) {
    this.edit(() => {
      for (const id of ids) {
        const node = this.nodes.get(id);
        node.x = Math.round(node.x + dx);
        node.y = Math.round(node.y + dy);
      }
    }, 'layout');
  }

  /** Renames a node, its wires with it; the reason it cannot, or null. */
  rename(id, next) {
    if (next === id) return null;
    if (!ID_RE.test(next)) return `'${next}' is not an id: a lowercase letter, then letters, _ and :`;
    if (this.nodes.has(next)) return `'${next}' is taken by another node`;
    this.edit(() => {
      const node = this.nodes.get(id);
      node.id = next;
      // the same object under its new key, in its place (the export keeps the order nodes were added in)
      this.nodes = new Map([...this.nodes].map(([k, n]) => (k === id ? [next, n] : [k, n])));
      for (const w of this.wires) {
        if (w.from === id) w.from = next;
        if (w.to === id) w.to = next;
      }
    });
    return null;
  }

  /** A node's config, as one undoable step (the API's verdict on it follows with `verdict`). */
  setConfig(id, config) {
    this.edit(() => (this.nodes.get(id).config = structuredClone(config)), 'config');
  }

  /**
   * What the API said of a node: its error (null: none) and, when it has
   * them (a config it takes), its output ports (wires from ports it lost are dropped). Not an undo step:
   * it follows from the config, which is.
   */
  verdict(id, { error, outputs }) {
    const node = this.nodes.get(id);
    if (!node) return;
    const portsChanged = outputs !== undefined && JSON.stringify(outputs) !== JSON.stringify(node.outputs);
    if (node.error === error && !portsChanged) return;
    node.error = error;
    if (portsChanged) {
      node.outputs = outputs;
      if (outputs) this.wires = this.wires.filter((w) => w.from !== id || outputs.includes(w.port));
    }
    this.#changed(portsChanged ? 'ports' : 'marks');
  }

  /**
   * Why the runtime would refuse `from/port → to`, or null (runtime/wiring.ts
   * and pipeline/graph.ts hold the rules: ramps link through a pipeline,
   * operators form no cycle).
   */
  refusal(from, port, to) {
    const a = this.nodes.get(from);
    const b = this.nodes.get(to);
    if (!a || !b) return 'no such node';
    if (from === to) return 'a node cannot feed itself';
    if (a.kind === 'offramp' && !a.outputs?.length) return 'this offramp has no output (a linked offramp answers on out and err)';
    if (b.kind === 'onramp' && !linked(b)) return 'an onramp takes no input (a linked onramp takes the replies to its requests)';
    if (a.kind !== 'operator' && b.kind !== 'operator') {
      return `${ARTICLE[a.kind]} cannot be linked to ${ARTICLE[b.kind]}: a pipeline goes between them (add a passthrough operator: it passes events on unchanged)`;
    }
    if (a.outputs && !a.outputs.includes(port)) return `node '${from}' (${a.type}) has no output port '${port}' (ports: ${a.outputs.join(', ')})`;
    if (this.wires.some((w) => w.from === from && w.port === port && w.to === to)) return 'this wire exists already';
    if (a.kind === 'operator' && b.kind === 'operator' && this.#reaches(to, from)) return `links: the graph would have a cycle through ${from} and ${to}`;
    return null;
  }

  #reaches(start, goal) {
    const seen = new Set();
    const next = [start];
    while (next.length) {
      const id = next.pop();
      if (id === goal) return true;
      if (seen.has(id)) continue;
      seen.add(id);
      for (const w of this.wires) if (w.from === id && this.nodes.get(w.to)?.kind === 'operator') next.push(w.to);
    }
    return false;
  }

  /** Adds the wire, or returns why not. */
  connect(from, port, to) {
    const why = this.refusal(from, port, to);
    if (why) return why;
    this.edit(() => this.wires.push({ from, port, to }));
    return null;
  }
}
