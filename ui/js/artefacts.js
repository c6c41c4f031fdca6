// The Artefacts view: the ids of each kind, one artefact with its instances,
// deleting and editing it, and publishing pasted YAML or JSON with the API's
// error at the field.
import { api, ApiError, contentTypeOf, KINDS } from './api.js';
import { $, h } from './dom.js';
import { lineOfField, splitFieldError } from './field-error.js';

let selected; // { kind, id }
let editing; // { kind, id, artefact }: the artefact the publish form replaces on submit
let changed = async () => {}; // reloads the lists and polls, after a publish or a delete

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
    id.startsWith('system::') ? h('p', { class: 'muted' }, 'a system artefact: it cannot be edited or deleted') : changeButtons(kind, id),
    h('pre', { class: 'json' }, JSON.stringify(state.artefact, null, 2)),
  );
}

/** Edit and Delete (with a confirm step) for the artefact shown. */
function changeButtons(kind, id) {
  const message = h('span', { class: 'error change-error', role: 'alert' });
  const confirm = h('span', { class: 'confirm', hidden: true });
  const buttons = h(
    'span',
    {},
    h('button', { type: 'button', class: 'edit', onclick: () => void edit(kind, id, message) }, 'Edit'),
    ' ',
    h('button', { type: 'button', class: 'delete', onclick: () => askToDelete() }, 'Delete…'),
  );
  const askToDelete = () => {
    message.textContent = '';
    confirm.replaceChildren(
      `Delete ${kind} ${id} from the repository? `,
      h('button', { type: 'button', class: 'confirm-delete danger', onclick: () => void remove(kind, id, message) }, `Delete ${id}`),
      ' ',
      h('button', { type: 'button', class: 'cancel-delete', onclick: () => (confirm.hidden = true) }, 'Cancel'),
    );
    confirm.hidden = false;
  };
  return h('p', { class: 'change' }, buttons, ' ', confirm, ' ', message);
}

async function remove(kind, id, message) {
  try {
    await api('DELETE', `/${kind}/${id}`);
  } catch (err) {
    message.textContent = err.message; // e.g. 409: it still has running instances
    return;
  }
  if (editing?.kind === kind && editing.id === id) stopEditing();
  selected = undefined;
  $('#artefact-detail').replaceChildren(h('p', { class: 'ok deleted' }, `deleted ${kind} ${id}`));
  await changed();
}

/**
 * Loads an artefact into the publish form. Artefacts do not change while
 * instances of them run, and the API has no PUT: saving deletes the old one
 * and publishes the text (putting the old one back if the text is refused).
 */
async function edit(kind, id, message) {
  message.textContent = '';
  let state;
  try {
    state = await api('GET', `/${kind}/${id}`);
  } catch (err) {
    message.textContent = err.message;
    return;
  }
  if (state.instances?.length) {
    message.textContent = `${kind} ${id} cannot be edited while instances of it run (${state.instances.join(', ')}): an artefact does not change under a running instance; deactivate them first`;
    return;
  }
  editing = { kind, id, artefact: state.artefact };
  $('#publish-kind').value = kind;
  $('#publish-kind').disabled = true;
  const textarea = $('#publish-text');
  textarea.value = JSON.stringify(state.artefact, null, 2);
  textarea.dispatchEvent(new Event('input'));
  $('#publish-ok').hidden = true;
  $('#publish-editing').replaceChildren(
    `editing ${kind} ${id}: Save replaces it (delete, then publish) `,
    h('button', { type: 'button', class: 'cancel-edit', onclick: stopEditing }, 'Cancel edit'),
  );
  $('#publish-editing').hidden = false;
  $('#publish-submit').textContent = `Save ${kind} ${id}`;
  textarea.focus();
}

function stopEditing() {
  editing = undefined;
  $('#publish-kind').disabled = false;
  $('#publish-editing').hidden = true;
  $('#publish-submit').textContent = 'Publish';
}

/** Saves an edit: delete the old artefact, publish the text; a refused text puts the old one back. */
async function replace(old, text) {
  await api('DELETE', `/${old.kind}/${old.id}`); // refused (409) while an instance started meanwhile: nothing changed
  try {
    return await api('POST', `/${old.kind}`, text, contentTypeOf(text));
  } catch (err) {
    try {
      await api('POST', `/${old.kind}`, old.artefact);
    } catch (restoreErr) {
      stopEditing(); // the old one is gone: what the form holds is a new artefact now
      throw new ApiError(err.status, `${err.message} (and putting the old ${old.kind} ${old.id} back failed: ${restoreErr.message})`);
    }
    throw err;
  }
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
  changed = onPublished;
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
      const old = editing;
      const artefact = old ? await replace(old, text) : await api('POST', `/${kind}`, text, contentTypeOf(text));
      if (old) stopEditing();
      $('#publish-ok').textContent = old
        ? `saved ${kind} ${artefact.id}${artefact.id === old.id ? '' : ` (in place of ${old.id})`}`
        : `published ${kind} ${artefact.id}`;
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
