// The Artefacts view: the ids of each kind, one artefact with its instances,
// and publishing pasted YAML or JSON with the API's error at the field.
import { api, ApiError, contentTypeOf, KINDS } from './api.js';
import { $, h } from './dom.js';
import { lineOfField, splitFieldError } from './field-error.js';

let selected; // { kind, id }

export async function refreshArtefacts() {
  const lists = await Promise.all(KINDS.map((kind) => api('GET', `/${kind}`)));
  const columns = KINDS.map((kind, i) =>
    h(
      'div',
      { class: 'panel', 'data-kind': kind },
      h('h2', {}, `${kind}s `, h('span', { class: 'count' }, `(${lists[i].length})`)),
      h(
        'ul',
        {},
        lists[i].map((id) =>
          h('li', {}, h('button', { type: 'button', class: selected?.kind === kind && selected.id === id ? 'selected' : '', 'data-id': id, onclick: () => showArtefact(kind, id) }, id)),
        ),
      ),
    ),
  );
  $('#artefact-lists').replaceChildren(...columns);
  return Object.fromEntries(KINDS.map((kind, i) => [kind, lists[i]]));
}

export async function showArtefact(kind, id) {
  selected = { kind, id };
  for (const b of document.querySelectorAll('#artefact-lists button')) {
    b.classList.toggle('selected', b.closest('[data-kind]').dataset.kind === kind && b.dataset.id === id);
  }
  const detail = $('#artefact-detail');
  let state;
  try {
    state = await api('GET', `/${kind}/${id}`);
  } catch (err) {
    detail.replaceChildren(h('p', { class: 'error' }, err.message));
    return;
  }
  const instances = state.instances ?? [];
  const error = h('span', { class: 'error', role: 'alert' });
  const instanceInput = h('input', { value: 'main', size: 10, 'aria-label': 'instance id' });
  const activate = h(
    'form',
    {
      class: 'inline',
      onsubmit: async (e) => {
        e.preventDefault();
        error.textContent = '';
        try {
          const body = kind === 'binding' ? { instance: instanceInput.value } : undefined;
          await api('POST', `/${kind}/${id}/${instanceInput.value}`, body);
          await showArtefact(kind, id);
        } catch (err) {
          error.textContent = err.message;
        }
      },
    },
    'Activate instance ',
    instanceInput,
    ' ',
    h('button', { type: 'submit' }, 'Activate'),
    ' ',
    error,
  );
  detail.replaceChildren(
    h('h2', {}, `${kind} ${id}`),
    h('p', {}, instances.length ? `instances: ${instances.join(', ')}` : h('span', { class: 'muted' }, 'no instance runs')),
    activate,
    h('pre', { class: 'json' }, JSON.stringify(state.artefact, null, 2)),
  );
}

function renderGutter(text, badLine, message) {
  const count = text.split('\n').length;
  const gutter = $('#publish-gutter');
  gutter.replaceChildren(
    ...Array.from({ length: count }, (_, i) => [
      i === badLine ? h('span', { class: 'bad', title: message }, `▶${i + 1}`) : `${i + 1}`,
      '\n',
    ]).flat(),
  );
  gutter.scrollTop = $('#publish-text').scrollTop;
}

function showPublishError(text, err) {
  const box = $('#publish-error');
  const textarea = $('#publish-text');
  const { field, message } = err instanceof ApiError ? splitFieldError(err.message) : { message: err.message };
  const line = field ? lineOfField(text, field) : -1;
  box.replaceChildren(
    field ? h('code', { class: 'field' }, field) : '',
    field ? ` ${line >= 0 ? `(line ${line + 1})` : ''}: ` : '',
    h('span', { class: 'message' }, message),
  );
  box.hidden = false;
  box.dataset.field = field ?? '';
  box.dataset.line = line >= 0 ? String(line + 1) : '';
  textarea.setAttribute('aria-invalid', 'true');
  renderGutter(text, line, message);
  if (line >= 0) {
    // put the caret on the field's line
    const start = text.split('\n').slice(0, line).join('\n').length + (line > 0 ? 1 : 0);
    textarea.setSelectionRange(start, start + text.split('\n')[line].length);
  }
}

export function setupPublish(onPublished) {
  const textarea = $('#publish-text');
  const clear = () => {
    $('#publish-error').hidden = true;
    textarea.removeAttribute('aria-invalid');
    renderGutter(textarea.value, -1);
  };
  textarea.addEventListener('input', clear);
  textarea.addEventListener('scroll', () => ($('#publish-gutter').scrollTop = textarea.scrollTop));
  renderGutter('', -1);
  $('#publish').addEventListener('submit', async (e) => {
    e.preventDefault();
    const kind = $('#publish-kind').value;
    const text = textarea.value;
    clear();
    $('#publish-ok').hidden = true;
    try {
      const artefact = await api('POST', `/${kind}`, text, contentTypeOf(text));
      $('#publish-ok').textContent = `published ${kind} ${artefact.id}`;
      $('#publish-ok').hidden = false;
      // until the new artefact's panel is drawn, the one shown before must not offer its Activate
      // button: a quick click would activate that artefact instead of the one just published
      $('#artefact-detail').replaceChildren(h('p', { class: 'muted' }, `loading ${kind} ${artefact.id}…`));
      await onPublished();
      await showArtefact(kind, artefact.id);
    } catch (err) {
      showPublishError(text, err);
    }
  });
}
