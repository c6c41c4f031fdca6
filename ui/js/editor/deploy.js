// Deploy: the whole canvas as one config document through
// POST /config?replace=true, all or nothing. A dry run first says what would
// change (published, activated, replaced, swapped in place, restarted,
// unchanged, already running); Apply sends it for real. A refusal changes
// nothing on the server, and its field is marked on its node.
import { api } from '../api.js';
import { h } from '../dom.js';
import { nodeOfError, toConfig } from './config.js';

// always with replace: a flow not deployed yet gets the same answer as without
// it, and a deployed one is changed by the hot-reload rules instead of refused
const CONFIG = '/config?replace=true';

const refs = (list = []) => list.map((r) => (typeof r === 'string' ? r : `${r.kind} ${r.id}`)).join(', ') || 'nothing';

/** The plan's rows (label, the answer's list, maybe a tooltip), in the order it happens. */
const ROWS = [
  ['publish', 'published'],
  ['activate', 'activated'],
  ['replace', 'replaced'],
  ['swap in place', 'swapped', 'pipeline instances replaced while their onramps keep running'],
  ['restart', 'restarted'],
  ['unchanged', 'unchanged'],
  ['running already', 'running'],
];

/**
 * Says which node a refusal names, and marks it when its config is wrong; a
 * conflict (409: another instance runs the changed artefact) is not the
 * node's fault, so it is named but left deployable once that instance is gone.
 */
function refused(flow, doc, err, panel) {
  const at = nodeOfError(flow, doc, err.message);
  if (at?.id && err.status !== 409) flow.verdict(at.id, { error: at.error });
  panel.replaceChildren(
    h('h2', {}, 'Deploy refused: nothing changed'),
    h('p', { class: 'field-error deploy-error', role: 'alert', 'data-node': at?.id ?? '' }, at?.id ? `node ${at.id}: ` : '', err.message),
  );
}

/** The "Deployed" line: what was published and activated, and what a replace swapped and restarted. */
function deployedLine(applied) {
  const said = [`published ${refs(applied.published)}`, `activated ${refs(applied.activated)}`];
  if (applied.replaced?.length) said.push(`replaced ${refs(applied.replaced)}`);
  if (applied.swapped?.length) said.push(`swapped in place ${refs(applied.swapped)}`);
  if (applied.restarted?.length) said.push(`restarted ${refs(applied.restarted)}`);
  return said.join('; ');
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
    plan = await api('POST', `${CONFIG}&dry_run=true`, doc);
  } catch (err) {
    refused(flow, doc, err, panel);
    return;
  }
  const apply = h('button', { type: 'button', id: 'deploy-apply', class: 'primary' }, 'Apply');
  apply.addEventListener('click', async () => {
    apply.disabled = true;
    try {
      const applied = await api('POST', CONFIG, doc);
      panel.replaceChildren(h('h2', {}, 'Deployed'), h('p', { class: 'ok deploy-ok' }, deployedLine(applied)));
      done();
    } catch (err) {
      refused(flow, doc, err, panel);
    }
  });
  const changes = ['published', 'activated', 'replaced', 'swapped', 'restarted'].reduce((n, key) => n + (plan[key]?.length ?? 0), 0);
  panel.replaceChildren(
    h('h2', {}, 'Deploy: what will change'),
    h('dl', { class: 'plan' }, ...ROWS.flatMap(([label, key, title]) => [h('dt', { title }, label), h('dd', { 'data-plan': key }, refs(plan[key]))])),
    changes === 0 ? h('p', { class: 'muted' }, 'the server runs this flow already, the same') : apply,
  );
}
