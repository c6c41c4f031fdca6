// The deployed flow, live, from each GET /status poll: every wire's
// events/s and every node's state and counts (an operator's own counts
// come from the pipeline's per-node stats in /status).
import { formatRate, Rates } from '../rates.js';

const rates = new Rates();
const STATES = ['running', 'paused', 'down', 'failed'];

/** The cumulative counts of the flow's instances (`main`), by keys the wires and nodes name. */
function counts(status, flow) {
  const at = new Map();
  const instance = (kind, artefact, id = 'main') => status.instances.find((i) => i.kind === kind && i.artefact === artefact && i.instance === id);
  for (const n of flow.nodes.values()) {
    if (n.kind === 'operator') continue;
    const i = instance(n.kind, n.id, n.system ? 'system' : 'main');
    if (!i) continue;
    at.set(`${n.id}#state`, { events: i.state });
    for (const p of i.ports) at.set(`${n.id}#${p.direction}:${p.port}`, { events: p.events, errors: p.errors });
  }
  for (const stats of instance('pipeline', flow.name)?.nodes ?? []) {
    at.set(`${stats.node}#in:in`, { events: stats.in, errors: 0 });
    for (const [port, events] of Object.entries(stats.out)) at.set(`${stats.node}#out:${port}`, { events, errors: 0 });
  }
  return at;
}

/** Writes the rates onto the wires and the counts and states onto the nodes drawn in `svg`. */
export function showLive(svg, flow, status) {
  const now = counts(status, flow);
  const sample = rates.sample(now);
  for (const g of svg.querySelectorAll('g.enode')) {
    const id = g.dataset.id;
    const state = now.get(`${id}#state`)?.events;
    for (const s of STATES) g.classList.toggle(s, s === state);
    const node = flow.nodes.get(id);
    const text = g.querySelector('text.count');
    if (!node || !text) continue;
    const c = (key) => now.get(`${id}#${key}`);
    if (node.kind === 'onramp') text.textContent = c('out:out') ? `${state} · out ${c('out:out').events}${c('out:err')?.events ? ` · err ${c('out:err').events}` : ''}` : '';
    else if (node.kind === 'offramp') text.textContent = c('in:in') ? `${state} · in ${c('in:in').events}${c('in:in').errors ? ` · errors ${c('in:in').errors}` : ''}` : '';
    else text.textContent = c('in:in') ? `in ${c('in:in').events}` : '';
    g.dataset.count = text.textContent;
  }
  if (!sample.rerate) return;
  for (const g of svg.querySelectorAll('g.wire')) {
    const rate = sample.rate(`${g.dataset.from}#out:${g.dataset.port}`);
    g.querySelector('text.wire-rate').textContent = rate === undefined ? '' : `${formatRate(rate)} ev/s`;
  }
}
