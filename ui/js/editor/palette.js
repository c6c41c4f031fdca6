// The palette: every onramp, operator and offramp type GET /types lists
// (an application's own types too), grouped by kind, filtered as one types.
// Drag a type onto the canvas, or press Enter / click Add on it to place
// it beside the others (the keyboard's way).
import { h } from '../dom.js';

const GROUPS = [
  ['onramp', 'Onramps (sources)'],
  ['operator', 'Operators (one pipeline)'],
  ['offramp', 'Offramps (sinks)'],
];

export function renderPalette(container, types, add) {
  const search = h('input', { type: 'search', id: 'palette-search', placeholder: 'filter types', 'aria-label': 'filter the types' });
  const lists = GROUPS.map(([kind, title]) => {
    const items = types
      .filter((t) => t.kind === kind)
      .map((t) =>
        h(
          'li',
          { draggable: 'true', 'data-kind': kind, 'data-type': t.type, title: t.description, ondragstart: (e) => e.dataTransfer.setData('text/plain', `${kind} ${t.type}`) },
          h('button', { type: 'button', class: 'add', 'aria-label': `add ${kind} ${t.type}`, onclick: () => add(kind, t.type) }, '+'),
          h('span', { class: 'type' }, t.type),
          h('small', { class: 'desc' }, t.description || '(no description)', t.reference ? h('span', { class: 'ref' }, ` — ${t.reference}`) : ''),
        ),
      );
    return h('section', { 'data-kind': kind }, h('h3', {}, title), h('ul', {}, items));
  });
  search.addEventListener('input', () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const li of container.querySelectorAll('li')) li.hidden = !words.every((w) => li.textContent.toLowerCase().includes(w));
  });
  container.replaceChildren(search, ...lists);
}
