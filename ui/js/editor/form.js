// The form of one node, generated from its type's JSON Schema: a field per
// property with its description and default; enums as selects, durations
// checked as they are typed, secrets as password fields holding a ${NAME}
// reference, maps (a window's group_by and aggregate) as rows of key and
// value; whatever else as JSON. The raw YAML of the config sits one click
// away and stays in step with the fields.
import { h } from '../dom.js';
import { toYaml } from './yaml.js';

const DURATION = /^(\d+(\.\d+)?(ms|s|m|h|d))+$/;
const NUMBER = /^\d+(\.\d+)?$/;
const REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$|^\$\{file:[^}]+\}$/;

const isDuration = (schema) => Array.isArray(schema.anyOf) && schema.anyOf.some((s) => s.pattern && s.pattern.includes('ms|s|m|h|d'));
const isMap = (schema) => schema.type === 'object' && !schema.properties && typeof schema.additionalProperties === 'object';
const isStringList = (schema) => schema.type === 'array' && schema.items && (schema.items.type === 'string' || schema.items.enum);

/** The value at `path` in `obj` (undefined when a step is missing). */
const get = (obj, path) => path.reduce((o, k) => (o === undefined || o === null ? undefined : o[k]), obj);

/** Sets (or, with undefined, removes) the value at `path`, dropping objects left empty on the way. */
function set(obj, path, value) {
  const [head, ...rest] = path;
  if (rest.length === 0) {
    if (value === undefined) delete obj[head];
    else obj[head] = value;
    return;
  }
  const inner = typeof obj[head] === 'object' && obj[head] !== null ? obj[head] : {};
  set(inner, rest, value);
  if (Object.keys(inner).length) obj[head] = inner;
  else delete obj[head];
}

/** A typed field's value as the config holds it; `{ error }` when it cannot be one. */
function parseValue(schema, text) {
  if (text === '') return { value: undefined };
  if (isDuration(schema)) {
    if (NUMBER.test(text) && Number(text) > 0) return { value: Number(text) };
    return DURATION.test(text) ? { value: text } : { value: text, error: 'a duration: milliseconds, or 500ms, 10s, 1m, 1h30m' };
  }
  if (schema.writeOnly) return REFERENCE.test(text) ? { value: text } : { value: text, error: 'a secret is written as a ${NAME} reference (the API takes none in clear text)' };
  if (schema.type === 'integer' || schema.type === 'number') {
    const n = Number(text);
    return Number.isFinite(n) && (schema.type === 'number' || Number.isInteger(n)) ? { value: n } : { value: text, error: `must be ${schema.type === 'integer' ? 'an integer' : 'a number'}` };
  }
  if (schema.type === 'boolean') return { value: text === 'true' };
  if (isStringList(schema)) return { value: text.split(',').map((s) => s.trim()).filter(Boolean) };
  if (schema.type === 'string' || schema.enum) return { value: text };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { value: text, error: 'not JSON' };
  }
}

const shown = (schema, value) => {
  if (value === undefined) return '';
  if (isStringList(schema) && Array.isArray(value)) return value.join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
};

let uid = 0;

/**
 * A form over `config` (edited in place). `changed(config, committed)` is
 * called on every keystroke (`committed` false: check it) and when a field
 * is left or a select picked (`committed` true: an undo step).
 */
export class NodeForm {
  #fields = new Map(); // dotted path → { input, message }
  #config;
  #changed;

  constructor(schema, config, changed) {
    this.#config = config;
    this.#changed = changed;
    this.element = h('div', { class: 'schema-form' }, schema ? this.#object(schema, []) : h('p', { class: 'muted' }, 'this type takes no config'));
  }

  #notify(committed) {
    this.#changed(this.#config, committed);
  }

  #object(schema, path) {
    const required = new Set(schema.required ?? []);
    return Object.entries(schema.properties ?? {}).map(([name, prop]) => this.#field(name, prop, [...path, name], required.has(name)));
  }

  #field(name, schema, path, required) {
    const id = `field-${++uid}`;
    const help = h('small', { class: 'help', id: `${id}-help` }, [schema.description ?? '', schema.default !== undefined ? ` (default ${JSON.stringify(schema.default)})` : ''].join(''));
    const message = h('div', { class: 'field-msg', role: 'alert', hidden: true });
    const label = h('label', { for: id }, name, required ? h('abbr', { title: 'required' }, ' *') : '');
    if (schema.type === 'object' && schema.properties) {
      return h('fieldset', { 'data-path': path.join('.') }, h('legend', {}, name), help, message, this.#remember(path, null, message), this.#object(schema, path));
    }
    if (isMap(schema)) return this.#map(name, schema, path, { label, help, message, id });
    let input;
    const value = get(this.#config, path);
    const attrs = { id, name: path.join('.'), 'aria-describedby': `${id}-help`, 'data-path': path.join('.') };
    if (schema.enum || schema.type === 'boolean') {
      const options = schema.enum ?? [true, false];
      input = h('select', attrs, h('option', { value: '' }, schema.default !== undefined ? `(default: ${schema.default})` : '(unset)'), options.map((o) => h('option', { value: String(o), selected: value === o }, String(o))));
    } else {
      const type = schema.writeOnly ? 'password' : schema.type === 'integer' || schema.type === 'number' ? 'number' : 'text';
      const placeholder = schema.writeOnly ? '${NAME}' : isDuration(schema) ? '5s' : schema.default !== undefined ? String(schema.default) : '';
      input = h('input', { ...attrs, type, value: shown(schema, value), placeholder, class: isDuration(schema) ? 'duration' : /^CEL\b/.test(schema.description ?? '') ? 'cel' : '' });
    }
    const update = (committed) => {
      const { value, error } = parseValue(schema, input.value);
      set(this.#config, path, value);
      this.#show(message, input, error);
      this.#notify(committed);
    };
    input.addEventListener('input', () => update(false));
    input.addEventListener('change', () => update(true));
    return h('div', { class: 'field' }, label, input, help, message, this.#remember(path, input, message));
  }

  /** A map field: one row per key, with an empty row to add one. */
  #map(name, schema, path, { label, help, message, id }) {
    const rows = h('div', { class: 'map-rows' });
    const valueSchema = schema.additionalProperties;
    const write = (committed) => {
      const map = {};
      for (const row of rows.children) {
        const [k, v] = row.querySelectorAll('input');
        if (k.value) map[k.value] = v.value;
      }
      set(this.#config, path, Object.keys(map).length ? map : undefined);
      this.#notify(committed);
    };
    const row = (k = '', v = '') => {
      const key = h('input', { value: k, placeholder: 'field', 'aria-label': `${name}: field name`, class: 'map-key' });
      const val = h('input', { value: v, placeholder: valueSchema.description ?? 'value', 'aria-label': `${name}: ${valueSchema.description ?? 'value'}`, class: 'map-value' });
      const remove = h('button', { type: 'button', class: 'map-remove', 'aria-label': `remove this ${name} entry`, onclick: () => (r.remove(), write(true)) }, '×');
      const r = h('div', { class: 'map-row' }, key, val, remove);
      for (const input of [key, val]) {
        input.addEventListener('input', () => write(false));
        input.addEventListener('change', () => write(true));
      }
      return r;
    };
    for (const [k, v] of Object.entries(get(this.#config, path) ?? {})) rows.append(row(k, typeof v === 'string' ? v : JSON.stringify(v)));
    if (!rows.children.length) rows.append(row());
    const add = h('button', { type: 'button', class: 'map-add', id, onclick: () => rows.append(row()) }, `+ ${name} entry`);
    return h('div', { class: 'field map', 'data-path': path.join('.') }, label, rows, add, help, message, this.#remember(path, null, message));
  }

  #remember(path, input, message) {
    this.#fields.set(path.join('.'), { input, message });
    return null;
  }

  #show(message, input, error) {
    message.textContent = error ?? '';
    message.hidden = !error;
    input?.setAttribute('aria-invalid', error ? 'true' : 'false');
  }

  /** Marks the field the API's message names (`config.window.size: …`), or returns false when none here matches. */
  markError(error) {
    for (const { input, message } of this.#fields.values()) this.#show(message, input, null);
    if (!error) return true;
    const match = /^config\.([\w.]+?)(?:\[\d+\])?: (.*)$/s.exec(error);
    if (!match) return false;
    const parts = match[1].split('.');
    for (let n = parts.length; n > 0; n--) {
      const field = this.#fields.get(parts.slice(0, n).join('.'));
      if (field) {
        this.#show(field.message, field.input, match[2]);
        return true;
      }
    }
    return false;
  }
}

/** The raw view of a config: its YAML, editable; `parsed(text)` is asked to read it back. */
export function yamlView(config, parsed) {
  const area = h('textarea', { class: 'yaml', rows: 10, spellcheck: 'false', 'aria-label': 'the config as YAML' }, toYaml(config));
  let timer;
  area.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => parsed(area.value), 300);
  });
  return {
    element: area,
    /** shows `config` unless the user is typing in it */
    update(next) {
      if (document.activeElement !== area) area.value = toYaml(next);
    },
  };
}
