// The Editor view: puts the palette, the canvas, the node form, Deploy
// and the live numbers together. The flow lives in one Flow (model.js);
// every part redraws from it when it changes.
import { api } from '../api.js';
import { $, h } from '../dom.js';
import { Canvas } from './canvas.js';
import { previewDeploy } from './deploy.js';
import { NodeForm, yamlView } from './form.js';
import { openFile, showExport, showRunning, showTestCase } from './io.js';
import { showLive } from './live.js';
import { Flow, ID_RE } from './model.js';
import { renderPalette } from './palette.js';
import { onTestCase, tapWire } from './tapbar.js';

const CHECK_DELAY_MS = 250; // typing pauses this long before the API checks the config

const flow = new Flow();
let types = []; // GET /types
let canvas;
let lastStatus;
let wiring; // the Wire fieldset of the node shown

const typeOf = (node) => types.find((t) => t.kind === node.kind && t.type === node.type);

function say(text) {
  $('#ed-message').textContent = text;
}

/** Asks the API what it thinks of a node's config (debounced per node): its error and its ports. */
const timers = new WeakMap();
function check(id, config, form) {
  const node = flow.nodes.get(id); // the object: a rename before the answer keeps it
  clearTimeout(timers.get(node));
  timers.set(
    node,
    setTimeout(async () => {
      if (flow.nodes.get(node.id) !== node) return;
      try {
        const verdict = await api('POST', `/types/${node.kind}/${encodeURIComponent(node.type)}/check`, config ?? node.config);
        // the node may have been renamed meanwhile: the verdict is its own still
        flow.verdict(node.id, { error: verdict.error, outputs: verdict.outputs });
        form?.markError(verdict.error);
      } catch (err) {
        say(`checking ${id}: ${err.message}`);
      }
    }, CHECK_DELAY_MS),
  );
}

function addNode(kind, type, x, y) {
  const info = types.find((t) => t.kind === kind && t.type === type);
  if (!info) return;
  const at = x === undefined ? canvas.freeSpot() : { x, y };
  const id = flow.add(kind, info, at.x, at.y);
  canvas.selected = new Set([id]);
  canvas.selectedWire = null;
  canvas.draw();
  inspect();
  check(id);
  say(`added ${kind} ${id}`);
}

/** The side panel: the selected node's form, or what a multi-selection holds. */
function inspect() {
  const panel = $('#inspector');
  wiring = null;
  const ids = [...canvas.selected].filter((id) => flow.nodes.has(id));
  if (ids.length !== 1) {
    panel.replaceChildren(
      ids.length
        ? h('p', {}, `${ids.length} nodes selected: ${ids.join(', ')}. Delete removes them; drag one to move them all.`)
        : h('p', { class: 'muted' }, 'Drag a type from the palette (or press its +), wire an output port (right) to an input (left), click a node for its form, a wire to tap it.'),
    );
    return;
  }
  const node = flow.nodes.get(ids[0]);
  const info = typeOf(node);
  const config = structuredClone(node.config);
  const idInput = h('input', { id: 'node-id', value: node.id, 'aria-describedby': 'node-id-msg' });
  const idMsg = h('div', { class: 'field-msg', id: 'node-id-msg', role: 'alert', hidden: true });
  idInput.addEventListener('change', () => {
    const old = node.id;
    canvas.selected = new Set([idInput.value]); // before the rename redraws, so the form follows the node
    const why = flow.rename(old, idInput.value);
    if (why) canvas.selected = new Set([old]);
    idMsg.textContent = why ?? '';
    idMsg.hidden = !why;
  });
  let yaml;
  const form = new NodeForm(info?.schema, config, (next, committed) => {
    yaml.update(next);
    if (committed) flow.setConfig(node.id, next);
    check(node.id, next, form);
  });
  yaml = yamlView(config, async (text) => {
    try {
      const verdict = await api('POST', `/types/${node.kind}/${encodeURIComponent(node.type)}/check`, text, 'application/yaml');
      flow.setConfig(node.id, verdict.config);
      flow.verdict(node.id, { error: verdict.error, outputs: verdict.outputs });
      yamlMsg.textContent = verdict.error ?? '';
      inspect(); // the fields show what the YAML says
    } catch (err) {
      yamlMsg.textContent = err.message;
    }
  });
  const yamlMsg = h('div', { class: 'field-msg yaml-msg', role: 'alert' });
  const raw = h('details', { class: 'raw' }, h('summary', {}, 'YAML'), yaml.element, yamlMsg);
  form.markError(node.error);
  panel.replaceChildren(
    h('h2', {}, `${node.kind} `, h('code', {}, node.type)),
    info?.description ? h('p', { class: 'muted' }, info.description, info.reference ? ` (${info.reference})` : '') : null,
    node.error ? h('p', { class: 'field-error node-error', role: 'alert' }, node.error) : null,
    h('div', { class: 'field' }, h('label', { for: 'node-id' }, 'id'), idInput, idMsg),
    form.element,
    raw,
    (wiring = wiringForm(node)),
  );
}

/** Wiring without a mouse: pick one of the node's output ports and a node to feed. */
function wiringForm(node) {
  if (!node || node.kind === 'offramp') return null;
  const port = h('select', { id: 'wire-port', 'aria-label': `output port of ${node.id}` }, (node.outputs ?? ['out']).map((p) => h('option', {}, p)));
  const target = h(
    'select',
    { id: 'wire-target', 'aria-label': 'node to feed' },
    [...flow.nodes.values()].filter((n) => n.id !== node.id && n.kind !== 'onramp').map((n) => h('option', { value: n.id }, `${n.id} (${n.kind})`)),
  );
  const msg = h('span', { class: 'field-msg', role: 'alert' });
  const connect = h('button', { type: 'button', id: 'wire-connect' }, 'Connect');
  connect.addEventListener('click', () => {
    const why = flow.connect(node.id, port.value, target.value);
    msg.textContent = why ?? `wired ${node.id} ${port.value} → ${target.value}`;
  });
  return h('fieldset', { class: 'wiring' }, h('legend', {}, 'Wire'), port, ' → ', target, ' ', connect, ' ', msg);
}

function deleteSelection() {
  if (canvas.selected.size) flow.remove([...canvas.selected]);
  else if (canvas.selectedWire) {
    const wire = flow.wires.find((w) => `${w.from}/${w.port}>${w.to}` === canvas.selectedWire);
    if (wire) flow.removeWire(wire);
    canvas.selectedWire = null;
  }
}

function setupKeys() {
  $('#view-editor').addEventListener('keydown', (e) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName);
    if (typing) return;
    const mod = e.ctrlKey || e.metaKey;
    if (mod && e.key.toLowerCase() === 'z') {
      e.preventDefault();
      if (e.shiftKey) flow.redo();
      else flow.undo();
    } else if (mod && e.key.toLowerCase() === 'y') {
      e.preventDefault();
      flow.redo();
    } else if (e.key === 'Delete' || e.key === 'Backspace') {
      e.preventDefault();
      deleteSelection();
    } else if (canvas.selected.size && e.key.startsWith('Arrow')) {
      e.preventDefault();
      const step = e.shiftKey ? 50 : 10;
      const [dx, dy] = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[e.key];
      flow.move([...canvas.selected], dx, dy);
    }
  });
}

function setupBar() {
  const name = $('#flow-name');
  name.addEventListener('change', () => {
    if (!ID_RE.test(name.value)) {
      say(`'${name.value}' is not an id: a lowercase letter, then letters, _ and :`);
      name.value = flow.name;
      return;
    }
    flow.edit(() => (flow.name = name.value));
  });
  $('#ed-undo').addEventListener('click', () => flow.undo());
  $('#ed-redo').addEventListener('click', () => flow.redo());
  $('#ed-delete').addEventListener('click', deleteSelection);
  $('#ed-zoom-in').addEventListener('click', () => canvas.zoom(1.25));
  $('#ed-zoom-out').addEventListener('click', () => canvas.zoom(0.8));
  $('#ed-fit').addEventListener('click', () => canvas.fit());
  $('#ed-deploy').addEventListener('click', () => void previewDeploy(flow, $('#inspector'), () => say(`deployed ${flow.name}`)));
  $('#ed-open-file').addEventListener('change', (e) => void openFile(flow, e.target, opened, say));
  $('#ed-open-running').addEventListener('click', () => void showRunning(flow, $('#inspector'), opened, say));
  $('#ed-export').addEventListener('click', () => showExport(flow, $('#inspector')));
  onTestCase(showTestCase);
}

/** A file or a running flow is on the canvas: check every node (their errors and ports), show them all. */
function opened({ name, nodes, notes }) {
  canvas.selected = new Set();
  canvas.selectedWire = null;
  canvas.fit();
  inspect();
  for (const n of nodes) check(n.id);
  say(`opened ${name}: ${nodes.length} nodes${notes.length ? `; ${notes.join('; ')}` : ''}`);
}

export async function setupEditor() {
  canvas = new Canvas($('#canvas'), flow, {
    select: inspect,
    wireClicked: (wire) => tapWire(wire, flow, $('#inspector')),
    refused: (why) => say(`wire refused: ${why}`),
    dropped: (kind, type, x, y) => addNode(kind, type, x, y),
  });
  flow.onChange((what) => {
    $('#flow-name').value = flow.name;
    $('#ed-undo').disabled = !flow.canUndo();
    $('#ed-redo').disabled = !flow.canRedo();
    canvas.draw();
    if (lastStatus) showLive($('#canvas'), flow, lastStatus);
    if (what === 'graph' || what === 'layout') inspect();
    // new ports: the form stays as it is (the user may be typing in it), the wiring choices follow
    if (what === 'ports') wiring?.replaceWith((wiring = wiringForm(flow.nodes.get([...canvas.selected][0]))) ?? '');
  });
  setupBar();
  setupKeys();
  canvas.draw();
  inspect();
  types = await api('GET', '/types');
  renderPalette($('#palette'), types, (kind, type) => addNode(kind, type));
  // time to interactive: the page's start to a palette one can pick from (docs/console.md)
  $('#palette').dataset.readyMs = String(Math.round(performance.now()));
}

/** Each GET /status poll: the live numbers on the canvas. */
export function editorStatus(status) {
  lastStatus = status;
  if (canvas) showLive($('#canvas'), flow, status);
}
