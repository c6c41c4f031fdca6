// Deploy: the whole canvas as one config document through POST /config,
// all or nothing. A dry run first says what would change (published,
// activated, unchanged, already running); Apply sends it for real. A
// refusal changes nothing on the server, and its field is marked on its node.
import { api } from '../api.js';
import { h } from '../dom.js';
import { nodeOfError, toConfig } from './config.js';

const refs = (list) => list.map((r) => (typeof r === 'string' ? r : `${r.kind} ${r.id}`)).join(', ') || 'nothing';

/** Marks the node a refusal names; says where when no node is named. */
function refused(flow, doc, err, panel) {
  const at = nodeOfError(flow, doc, err.message);
  if (at?.id) flow.verdict(at.id, { error: at.error });
  panel.replaceChildren(
    h('h2', {}, 'Deploy refused: nothing changed'),
    h('p', { class: 'field-error deploy-error', role: 'alert', 'data-node': at?.id ?? '' }, at?.id ? `node ${at.id}: ` : '', err.message),
  );
}

/** Shows the dry run of the canvas in `panel`, with Apply; `done()` after a deploy went through. */
export async function previewDeploy(flow, panel, done) {
  const doc = toConfig(flow);
  const invalid = [...flow.nodes.values()].filter((n) => n.error);
  if (invalid.length) {
    panel.replaceChildren(h('h2', {}, 'Not deployed'), h('p', { class: 'field-error deploy-error', role: 'alert' }, `fix first: ${invalid.map((n) => `${n.id} (${n.error})`).join('; ')}`));
    return;
  }
  panel.replaceChildren(h('p', { class: 'muted' }, 'asking the server what would change…'));
  let plan;
  try {
    plan = await api('POST', '/config?dry_run=true', doc);
  } catch (err) {
    refused(flow, doc, err, panel);
    return;
  }
  const apply = h('button', { type: 'button', id: 'deploy-apply', class: 'primary' }, 'Apply');
  apply.addEventListener('click', async () => {
    apply.disabled = true;
    try {
      const applied = await api('POST', '/config', doc);
      panel.replaceChildren(h('h2', {}, 'Deployed'), h('p', { class: 'ok deploy-ok' }, `published ${refs(applied.published)}; activated ${refs(applied.activated)}`));
      done();
    } catch (err) {
      refused(flow, doc, err, panel);
    }
  });
  const nothing = plan.published.length + plan.activated.length === 0;
  panel.replaceChildren(
    h('h2', {}, 'Deploy: what will change'),
    h(
      'dl',
      { class: 'plan' },
      h('dt', {}, 'publish'),
      h('dd', { 'data-plan': 'published' }, refs(plan.published)),
      h('dt', {}, 'activate'),
      h('dd', { 'data-plan': 'activated' }, refs(plan.activated)),
      h('dt', {}, 'unchanged'),
      h('dd', { 'data-plan': 'unchanged' }, refs(plan.unchanged)),
      h('dt', {}, 'running already'),
      h('dd', { 'data-plan': 'running' }, refs(plan.running)),
    ),
    nothing ? h('p', { class: 'muted' }, 'the server runs this flow already, the same') : apply,
  );
}
