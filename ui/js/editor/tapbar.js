// The tap side bar: click a wire of the deployed flow to see the events
// passing it, newest first, with Pause and a filter: a CEL expression the
// server evaluates on each event (`GET /tap/…?filter=`), so only matching
// events cross the network; a syntax error is the server's 400, shown under
// the field. The events kept here feed the test-case export
// (testcase.js). What the tap reaches are the
// instances' ports: a wire leaving an onramp is that port, a wire into an
// offramp is its `in`; a wire between two operators lies inside the
// pipeline, where no tap reaches.
import { headers } from '../api.js';
import { h } from '../dom.js';
import { readEvents } from '../tap.js';

const KEEP = 100;
let running; // AbortController of the side bar's tap
let onCase; // what Test case… does (set by the editor)

/** Sets what the side bar's Test case… button does: `show(flow, panel)`. */
export function onTestCase(show) {
  onCase = show;
}

/** The tap path of a wire (`/tap/onramp/in/main/out`), or undefined inside the pipeline. */
function tapPath(wire, flow) {
  const from = flow.nodes.get(wire.from);
  const to = flow.nodes.get(wire.to);
  const instance = (n) => (n.system ? 'system' : 'main');
  if (from && from.kind !== 'operator') return `/tap/${from.kind}/${wire.from}/${instance(from)}/${wire.port}`;
  if (to?.kind === 'offramp') return `/tap/offramp/${wire.to}/${instance(to)}/in`;
  return undefined;
}

/** The events the side bar holds (newest last), the wire they were read on, and its tap path. */
export const captured = { events: [], wire: null, path: null };

export async function tapWire(wire, flow, panel, filter = '') {
  running?.abort();
  const path = tapPath(wire, flow);
  const title = h('h2', {}, `Tap ${wire.from} ${wire.port} → ${wire.to}`);
  if (!path) {
    panel.replaceChildren(title, h('p', { class: 'muted tap-state' }, 'this wire is inside the pipeline: a tap reaches the ports of instances (click a wire leaving an onramp or entering an offramp)'));
    return;
  }
  const list = h('ol', { class: 'tap-list', reversed: true });
  const state = h('p', { class: 'muted tap-state', role: 'status' }, `tapping ${path}${filter ? ` where ${filter}` : ''}…`);
  const filterInput = h('input', { id: 'tap-filter', value: filter, placeholder: 'event.level == "error"', size: 24, 'aria-describedby': 'tap-filter-help' });
  const filterForm = h(
    'form',
    { class: 'tap-filter' },
    h('label', { for: 'tap-filter' }, 'filter (CEL)'),
    ' ',
    filterInput,
    ' ',
    h('button', { type: 'submit' }, 'Apply'),
    h('small', { id: 'tap-filter-help', class: 'muted' }, ' on event and meta; empty: every event'),
  );
  filterForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void tapWire(wire, flow, panel, filterInput.value.trim());
  });
  captured.events = [];
  captured.wire = wire;
  captured.path = path;
  let paused = false;
  const pause = h('button', { type: 'button', class: 'tap-pause' }, 'Pause');
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? 'Resume' : 'Pause';
  });
  const controller = new AbortController();
  running = controller;
  const stop = h('button', { type: 'button', class: 'tap-stop', onclick: () => controller.abort() }, 'Stop');
  const exportCase = h('button', { type: 'button', class: 'tap-case', title: 'a test case for eddy test from the events shown' }, 'Test case…');
  exportCase.addEventListener('click', () => onCase?.(flow, panel));
  panel.replaceChildren(title, filterForm, h('p', {}, pause, ' ', stop, ' ', exportCase), state, list);
  let count = 0;
  try {
    const res = await fetch(filter ? `${path}?filter=${encodeURIComponent(filter)}` : path, { headers: headers({ accept: 'text/event-stream' }), signal: controller.signal });
    if (!res.ok) {
      const why = (await res.json().catch(() => ({}))).error ?? res.statusText;
      state.textContent = `tap refused (${res.status}): ${why}${res.status === 404 ? ' — is the flow deployed?' : ''}`;
      state.classList.toggle('field-error', res.status === 400);
      return;
    }
    await readEvents(res.body, (type, data) => {
      const parsed = JSON.parse(data);
      if (type !== 'event') return;
      count++;
      state.textContent = `${count} events${paused ? ' (paused)' : ''}`;
      if (paused) return;
      list.prepend(h('li', { class: 'event' }, JSON.stringify(parsed.data)));
      while (list.children.length > KEEP) list.lastElementChild.remove();
      captured.events.push({ data: parsed.data, meta: parsed.meta, batch: parsed.batch });
      if (captured.events.length > KEEP) captured.events.shift();
    });
  } catch (err) {
    if (!controller.signal.aborted) state.textContent = `tap failed: ${err.message}`;
  } finally {
    if (controller.signal.aborted) state.textContent = `stopped after ${count} events`;
  }
}
