// YAML out of plain JSON values, for the raw view of a node and the
// exported config file. Block style, keys in the order given; a string is
// quoted (as JSON, which YAML reads) whenever plain would read back as
// something else. Reading YAML is the API's job: the page sends the text
// and gets JSON back (POST /types/{kind}/{type}/check, POST /config).

const PLAIN = /^[A-Za-z_/][\w ./:@{}$()=<>!&|,+*-]*$/;
const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;

function scalar(value) {
  if (value === null || value === undefined) return 'null';
  if (typeof value !== 'string') return String(value);
  // `a: b`, ` #`, a trailing space or a leading `{`/`$` plain would change meaning or look like a flow map
  const plain = PLAIN.test(value) && !RESERVED.test(value) && !/: | #|\s$|^[{$]/.test(value);
  return plain ? value : JSON.stringify(value);
}

const isEmpty = (v) => (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && v !== null && Object.keys(v).length === 0);
const key = (k) => (PLAIN.test(k) && !RESERVED.test(k) && !k.includes(': ') && !/^[{$]/.test(k) ? k : JSON.stringify(k));

function lines(value, indent) {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (typeof item !== 'object' || item === null || isEmpty(item)) return [`${pad}- ${isEmpty(item) ? JSON.stringify(item) : scalar(item)}`];
      const inner = lines(item, indent + 2);
      return [`${pad}- ${inner[0].trimStart()}`, ...inner.slice(1)];
    });
  }
  return Object.entries(value).flatMap(([k, v]) => {
    if (typeof v !== 'object' || v === null || isEmpty(v)) return [`${pad}${key(k)}: ${isEmpty(v) ? JSON.stringify(v) : scalar(v)}`];
    return [`${pad}${key(k)}:`, ...lines(v, indent + 2)];
  });
}

/** `value` (an object or a list) as a YAML document; `{}` for an empty one. */
export function toYaml(value) {
  return isEmpty(value) ? `${JSON.stringify(value)}\n` : `${lines(value, 0).join('\n')}\n`;
}
