// The API names the field of an invalid artefact first: `nodes[0].type: unknown
// operator 'nope'`. This finds that field's line in the text the user pasted,
// so the error can stand next to it.

const FIELD_MESSAGE = /^((?:[A-Za-z_][\w:-]*|\[\d+\])(?:\.[A-Za-z_][\w:/-]*|\[\d+\]|\.'[^']*')*): (.*)$/s;

/** `{ field, message }` when the API's message names a field, otherwise `{ message }` */
export function splitFieldError(text) {
  const match = FIELD_MESSAGE.exec(text);
  return match ? { field: match[1], message: match[2] } : { message: text };
}

function segments(field) {
  const out = [];
  for (const m of field.matchAll(/\[(\d+)\]|'([^']*)'|([^.[\]']+)/g)) {
    if (m[1] !== undefined) out.push({ index: Number(m[1]) });
    else out.push({ key: m[2] ?? m[3] });
  }
  return out;
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The 0-based line of `field` in YAML or JSON `text`, or -1: each key is
 * looked for after the line of the one before it, and `[n]` counts list
 * items ("- ") from there. Close enough to point at; the message says exactly.
 */
export function lineOfField(text, field) {
  const lines = text.split('\n');
  let cursor = -1;
  let found = -1;
  // after a list item, its first key is on the item's own line (`- id: a`)
  let from = 0;
  for (const seg of segments(field)) {
    if (seg.key !== undefined) {
      const key = new RegExp(`^\\s*(?:-\\s+)?["']?${escape(seg.key)}["']?\\s*:|["']${escape(seg.key)}["']\\s*:`);
      const at = lines.findIndex((line, i) => i >= from && key.test(line));
      if (at < 0) return found;
      cursor = found = at;
      from = at + 1;
    } else {
      let indent;
      let seen = -1;
      for (let i = cursor + 1; i < lines.length; i++) {
        const dash = /^(\s*)-(\s|$)/.exec(lines[i]);
        if (!dash) continue;
        indent ??= dash[1].length;
        if (dash[1].length !== indent) continue;
        if (++seen === seg.index) {
          cursor = found = i;
          from = i;
          break;
        }
      }
    }
  }
  return found;
}
