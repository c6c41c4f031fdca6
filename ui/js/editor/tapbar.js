// The tap side bar: click a wire of the deployed flow to see the events
// passing it, newest first, with Pause. What the tap reaches are the
// instances' ports: a wire leaving an onramp is that port, a wire into an
// offramp is its `in`; a wire between two operators lies inside the
// pipeline, where no tap reaches.
import { headers } from '../api.js';
import { h } from '../dom.js';
import { readEvents } from '../tap.js';

const KEEP = 100;
let running; // AbortController of the side bar's tap

/** The tap path of a wire (`/tap/onramp/in/main/out`), or undefined inside the pipeline. */
function tapPath(wire, flow) {
  const from = flow.nodes.get(wire.from);
  const to = flow.nodes.get(wire.to);
  if (from?.kind === 'onramp') return `/tap/onramp/${wire.from}/main/${wire.port}`;
  if (to?.kind === 'offramp') return `/tap/offramp/${wire.to}/main/in`;
  return undefined;
}

export async function tapWire(wire, flow, panel) {
  running?.abort();
  const path = tapPath(wire, flow);
  const title = h('h2', {}, `Tap ${wire.from} ${wire.port} → ${wire.to}`);
  if (!path) {
    panel.replaceChildren(title, h('p', { class: 'muted tap-state' }, 'this wire is inside the pipeline: a tap reaches the ports of instances (click a wire leaving an onramp or entering an offramp)'));
    return;
  }
  const list = h('ol', { class: 'tap-list', reversed: true });
  const state = h('p', { class: 'muted tap-state', role: 'status' }, `tapping ${path}…`);
  let paused = false;
  const pause = h('button', { type: 'button', class: 'tap-pause' }, 'Pause');
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? 'Resume' : 'Pause';
  });
  const controller = new AbortController();
  running = controller;
  const stop = h('button', { type: 'button', class: 'tap-stop', onclick: () => controller.abort() }, 'Stop');
  panel.replaceChildren(title, h('p', {}, pause, ' ', stop), state, list);
  let count = 0;
  try {
    const res = await fetch(path, { headers: headers({ accept: 'text/event-stream' }), signal: controller.signal });
    if (!res.ok) {
      state.textContent = `tap refused (${res.status}): ${(await res.json().catch(() => ({}))).error ?? res.statusText} — is the flow deployed?`;
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
    });
  } catch (err) {
    if (!controller.signal.aborted) state.textContent = `tap failed: ${err.message}`;
  } finally {
    if (controller.signal.aborted) state.textContent = `stopped after ${count} events`;
  }
}
