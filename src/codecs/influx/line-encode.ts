import { I64_MAX, type FieldValue, type InfluxPoint } from './point';

/**
 * Writes one point as a line of InfluxDB line protocol (no newline: framing
 * is the `lines` postprocessor's job). Tags are sorted by key, as InfluxDB
 * advises; fields keep their order.
 */
export function formatLine(point: InfluxPoint): string {
  // a leading # reads as a comment, and leading tabs are trimmed from a line
  if (/^[#\t]/.test(point.measurement)) throw new Error('influx: a measurement cannot start with # or a tab');
  let line = escapeName(point.measurement, MEASUREMENT_SPECIAL, 'measurement');
  for (const key of Object.keys(point.tags).sort()) {
    const value = point.tags[key];
    if (key === '' || value === '') throw new Error(`influx: tag ${JSON.stringify(key)} needs a non-empty key and value`);
    line += `,${escapeName(key, KEY_SPECIAL, 'tag key')}=${escapeName(value, KEY_SPECIAL, 'tag value')}`;
  }
  let separator = ' ';
  for (const [key, value] of Object.entries(point.fields)) {
    if (key === '') throw new Error('influx: empty field key');
    line += `${separator}${escapeName(key, KEY_SPECIAL, 'field key')}=${formatField(value)}`;
    separator = ',';
  }
  if (point.timestamp !== undefined) {
    if (point.timestamp > I64_MAX) throw new Error('influx: timestamp beyond the i64 range');
    line += ` ${point.timestamp}`;
  }
  return line;
}

// the backslash is escaped too, so a name ending in one cannot swallow the delimiter after it
const MEASUREMENT_SPECIAL = /[, \\]/g;
const KEY_SPECIAL = /[,= "\\]/g;

function escapeName(name: string, special: RegExp, what: string): string {
  if (/[\n\r]/.test(name)) throw new Error(`influx: a ${what} cannot hold a line break`);
  return name.replace(special, '\\$&');
}

function formatField(value: FieldValue): string {
  switch (typeof value) {
    case 'number':
      // String(n) is the shortest text that reads back as the same double; -0 keeps its sign
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return value > I64_MAX ? `${value}u` : `${value}i`;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return `"${value.replace(/["\\]/g, '\\$&')}"`;
  }
}
