// The Instances view: every instance from GET /status, per port the event
// rate (the difference of two polls' cumulative counts) and the breaker,
// with deactivate and tap buttons; and the activate form.
import { api, contentTypeOf, instancePath, parseUrl } from './api.js';
import { $, badge, h } from './dom.js';
import { countsOf, formatRate, portKey, Rates } from './rates.js';

const rates = new Rates();
const rows = new Map(); // rowKey → { tr, cells }

const rowKey = (instance, port) => (port ? portKey(instancePath(instance), port) : `${instancePath(instance)}#`);

/** Draws a /status answer; rows are kept by key, so buttons stay put while numbers change. */
export function renderInstances(status, { onDeactivate, onTap }) {
  const { rerate, rate } = rates.sample(countsOf(status, instancePath));
  const seen = new Set();
  const tbody = $('#instances tbody');
  const ordered = [...status.instances].sort((a, b) => instancePath(a).localeCompare(instancePath(b)));
  for (const instance of ordered) {
    const path = instancePath(instance);
    const ports = instance.ports.length ? instance.ports : [undefined];
    ports.forEach((port, i) => {
      const key = rowKey(instance, port);
      seen.add(key);
      let row = rows.get(key);
      if (!row) {
        const cells = {
          url: h('td', { class: 'url' }),
          state: h('td'),
          breaker: h('td'),
          port: h('td', {}, port?.port ?? '-'),
          dir: h('td', {}, port?.direction ?? ''),
          rate: h('td', { class: 'num rate' }, '-'),
          errors: h('td', { class: 'num' }, '-'),
          total: h('td', { class: 'num total' }),
          actions: h('td'),
        };
        if (port) cells.actions.append(h('button', { type: 'button', class: 'tap', onclick: () => onTap(path, port.port) }, 'Tap'), ' ');
        if (i === 0 && !instance.artefact.startsWith('system::')) {
          cells.actions.append(h('button', { type: 'button', class: 'deactivate', onclick: () => onDeactivate(path) }, 'Deactivate'));
        }
        const tr = h('tr', { 'data-url': path, 'data-port': port ? port.port : '', 'data-direction': port?.direction ?? '' }, Object.values(cells));
        row = { tr, cells };
        rows.set(key, row);
      }
      const { cells } = row;
      cells.url.textContent = i === 0 ? path : '';
      cells.state.replaceChildren(i === 0 ? badge(instance.state) : '', i === 0 && instance.reason ? ` ${instance.reason}` : '');
      cells.breaker.replaceChildren(i === 0 ? badge(instance.breaker ?? undefined) : '');
      if (port) {
        if (rerate) {
          cells.rate.textContent = formatRate(rate(key, 'events'));
          cells.errors.textContent = formatRate(rate(key, 'errors'));
        }
        cells.total.textContent = String(port.events);
      }
      tbody.append(row.tr); // re-appending keeps the sorted order
    });
  }
  for (const [key, row] of rows) {
    if (!seen.has(key)) {
      row.tr.remove();
      rows.delete(key);
    }
  }
}

export async function deactivate(url) {
  const { kind, artefact, instance } = parseUrl(url);
  await api('DELETE', `/${kind}/${artefact}/${instance}`);
}

/** The activate form: the artefacts of the chosen kind, an instance id, a binding's placeholders. */
export function setupActivate(artefactsOf, onActivated) {
  const kind = $('#activate-kind');
  const artefact = $('#activate-artefact');
  const fill = () => {
    const ids = artefactsOf()[kind.value] ?? [];
    const keep = artefact.value;
    artefact.replaceChildren(...ids.map((id) => h('option', { selected: id === keep }, id)));
    $('#activate-mapping').hidden = kind.value !== 'binding';
  };
  kind.addEventListener('change', fill);
  $('#activate').addEventListener('submit', async (e) => {
    e.preventDefault();
    const error = $('#activate-error');
    error.textContent = '';
    const instance = $('#activate-instance').value.trim();
    const mapping = $('#activate-mapping').value.trim();
    try {
      if (kind.value === 'binding') {
        const body = mapping || JSON.stringify({ instance });
        await api('POST', `/binding/${artefact.value}/${instance}`, body, contentTypeOf(body));
      } else {
        await api('POST', `/${kind.value}/${artefact.value}/${instance}`);
      }
      await onActivated();
    } catch (err) {
      error.textContent = err.message;
    }
  });
  return fill;
}
