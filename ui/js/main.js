// The console's shell: views by URL hash, the token, and one poll of
// GET /status a second that every live part draws from.
import { api, instancePath, setToken, token } from './api.js';
import { refreshArtefacts, setupPublish } from './artefacts.js';
import { $ } from './dom.js';
import { drawBindingGraph, updateBindingGraph } from './graph.js';
import { deactivate, renderInstances, setupActivate } from './instances.js';
import { startTap, stopTap, tapOptions } from './tap.js';
import { editorStatus, setupEditor } from './editor/editor.js';

const POLL_MS = 1000;
const VIEWS = ['artefacts', 'instances', 'graph', 'tap', 'editor'];

let status; // the last GET /status
let artefacts = { onramp: [], offramp: [], pipeline: [], binding: [] };
let graphDrawn = ''; // what the binding graph shows, to redraw only on change

function banner(text) {
  $('#banner').textContent = text ?? '';
  $('#banner').hidden = !text;
}

function view() {
  const name = location.hash.slice(1);
  return VIEWS.includes(name) ? name : 'artefacts';
}

function showView() {
  const name = view();
  for (const v of VIEWS) $(`#view-${v}`).hidden = v !== name;
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.view === name);
  if (name === 'graph') graphDrawn = '';
  void poll();
}

async function reloadArtefacts() {
  artefacts = await refreshArtefacts();
  fillActivate();
}

let polling; // the poll under way: callers share it rather than start another

function poll() {
  polling ??= pollOnce().finally(() => (polling = undefined));
  return polling;
}

async function pollOnce() {
  try {
    status = await api('GET', '/status');
    banner();
  } catch (err) {
    banner(err.status === 401 ? `${err.message}: enter the API token above` : `GET /status: ${err.message}`);
    return;
  }
  $('#server').textContent = `${status.version} · up ${Math.floor(status.uptime_s)} s · ${status.instances.length} instances`;
  if (JSON.stringify(status.artefacts) !== JSON.stringify(artefacts)) await reloadArtefacts();
  renderInstances(status, { onDeactivate, onTap });
  tapOptions(status);
  editorStatus(status);
  const running = status.instances.filter((i) => i.kind === 'binding').map(instancePath).join() + '|' + status.artefacts.binding.join();
  if (view() === 'graph' && running !== graphDrawn) {
    graphDrawn = running;
    await drawBindingGraph(status);
  } else updateBindingGraph(status); // states and rates every poll, even unseen, so the rates have their baseline
}

async function onDeactivate(url) {
  try {
    await deactivate(url);
    $('#status-note').textContent = `deactivated ${url}`;
  } catch (err) {
    $('#status-note').textContent = `${url}: ${err.message}`;
  }
  await poll();
}

function onTap(url, port) {
  location.hash = '#tap';
  $('#tap-port').value = `${url}#${port}`;
  void startTap(url, port);
}

let fillActivate = () => {};

function setup() {
  $('#token').value = token();
  $('#token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    setToken($('#token').value);
    void reloadArtefacts().catch(() => {});
    void poll();
  });
  setupPublish(async () => {
    await reloadArtefacts();
    await poll();
  });
  fillActivate = setupActivate(() => artefacts, poll);
  $('#tap-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const [url, port] = $('#tap-port').value.split('#');
    if (url) void startTap(url, port);
  });
  $('#tap-stop').addEventListener('click', stopTap);
  void setupEditor().catch((err) => banner(`the editor's types: ${err.message}`));
  window.addEventListener('hashchange', showView);
  showView();
  void reloadArtefacts().catch((err) => banner(err.status === 401 ? `${err.message}: enter the API token above` : err.message));
  setInterval(() => void poll(), POLL_MS);
}

setup();
