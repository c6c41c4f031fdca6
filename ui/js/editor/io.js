// The editor's files: Open (a config file from disk, read by the server),
// Open running (a deployed binding with its artefacts, from the API),
// Export (the canvas as a config file, the compact `flow` form where it
// applies) and the test case skeleton of a tapped wire. Each shows its
// result in the side panel; a text to keep is offered as a download and
// shown, selectable, in a read-only text area.
import { h } from '../dom.js';
import { toConfig } from './config.js';
import { readFile, readRunning, runningFlows } from './import.js';
import { captured } from './tapbar.js';
import { testCase } from './testcase.js';
import { toYaml } from './yaml.js';

/** The canvas as the text of a config file. */
export const exportText = (flow) => toYaml(toConfig(flow));

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/yaml' }));
  // the link lives as long as the panel: a click downloads it again
  return h('a', { href: url, download: name, class: 'button download' }, `Download ${name}`);
}

function textPanel(panel, title, id, name, text, note) {
  const area = h('textarea', { id, class: 'yaml export', rows: 18, readonly: true, spellcheck: 'false', 'aria-label': title }, text);
  panel.replaceChildren(h('h2', {}, title), note ? h('p', { class: 'muted' }, note) : null, h('p', {}, download(name, text)), area);
}

export function showExport(flow, panel) {
  const doc = toConfig(flow);
  textPanel(
    panel,
    'Export',
    'export-text',
    `${flow.name}.yaml`,
    exportText(flow),
    doc.flow ? 'the compact flow form: every onramp feeds the pipeline, which feeds every offramp' : 'a binding and its mapping: the flow has ports the compact flow form cannot say',
  );
}

export function showTestCase(flow, panel) {
  const made = captured.wire ? testCase(flow, captured.wire, captured.events) : { error: 'tap a wire first' };
  if (made.error) {
    panel.querySelector('.tap-state')?.replaceChildren(made.error);
    return;
  }
  textPanel(panel, 'Test case skeleton', 'case-text', `${flow.name}.cases.yaml`, made.text, `eddy test ${flow.name}.cases.yaml, beside the export ${flow.name}.yaml`);
}

/** Puts what was read on the canvas; `done(notes)` says so. */
function open(flow, drawn, done) {
  flow.replace(drawn.name, drawn.nodes, drawn.wires);
  done(drawn);
}

/** Reads the file chosen in `input` onto the canvas. */
export async function openFile(flow, input, done, fail) {
  const file = input.files?.[0];
  if (!file) return;
  input.value = ''; // the same file chosen again opens again
  try {
    open(flow, await readFile(await file.text()), done);
  } catch (err) {
    fail(`${file.name}: ${err.message}`);
  }
}

/** The panel choosing a running binding to open. */
export async function showRunning(flow, panel, done, fail) {
  let flows;
  try {
    flows = await runningFlows();
  } catch (err) {
    fail(err.message);
    return;
  }
  if (!flows.length) {
    panel.replaceChildren(h('h2', {}, 'Open a running flow'), h('p', { class: 'muted' }, 'no binding runs on this server'));
    return;
  }
  const select = h(
    'select',
    { id: 'running-flow', 'aria-label': 'running binding' },
    flows.map((f) => h('option', { value: f.binding }, `${f.binding} (instance ${f.instance})`)),
  );
  const go = h('button', { type: 'button', id: 'running-open', class: 'primary' }, 'Open');
  go.addEventListener('click', async () => {
    try {
      open(flow, await readRunning(select.value), done);
    } catch (err) {
      fail(`${select.value}: ${err.message}`);
    }
  });
  panel.replaceChildren(
    h('h2', {}, 'Open a running flow'),
    h('p', { class: 'muted' }, 'the binding and the artefacts it links, as the server has them (secrets shown as ***: write them again as ${NAME})'),
    h('p', {}, select, ' ', go),
  );
}
