import { setOwn } from '../integers';
import { I64_MAX, I64_MIN, U64_MAX, type FieldValue, type InfluxPoint } from './point';

/**
 * Parses one line of InfluxDB line protocol:
 * `measurement[,tag=value…] field=value[,field=value…] [timestamp]`.
 * Returns `undefined` for a blank or comment line.
 *
 * Escapes: a backslash before one of `,` `=` space `"` `\` stands for that
 * character in a measurement, tag key, tag value or field key; before any
 * other character it is a literal backslash. In a string field only `\"` and
 * `\\` are escapes.
 */
export function parseLine(input: string): InfluxPoint | undefined {
  const line = input.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
  if (line === '' || line.startsWith('#')) return undefined;
  const reader = new LineReader(line);
  const measurement = reader.name(MEASUREMENT_END);
  if (measurement === '') reader.fail('missing measurement');
  const tags: Record<string, string> = {};
  while (reader.peek() === ',') {
    reader.pos++;
    const key = reader.name(KEY_END);
    if (key === '') reader.fail('empty tag key');
    reader.expect('=');
    const value = reader.name(TAG_VALUE_END);
    if (value === '') reader.fail(`empty value for tag ${JSON.stringify(key)}`);
    setOwn(tags, key, value);
  }
  reader.spaces();
  const fields: Record<string, FieldValue> = {};
  do {
    const key = reader.name(KEY_END);
    if (key === '') reader.fail('missing field key');
    reader.expect('=');
    setOwn(fields, key, reader.fieldValue());
  } while (reader.peek() === ',' && reader.pos++);
  const point: InfluxPoint = { measurement, tags, fields };
  if (reader.peek() === ' ') {
    reader.spaces();
    point.timestamp = reader.timestamp();
  }
  if (!reader.atEnd()) reader.fail('unexpected characters');
  return point;
}

const MEASUREMENT_END = new Set([',', ' ']);
const KEY_END = new Set([',', '=', ' ']);
const TAG_VALUE_END = new Set([',', ' ']);
const NAME_ESCAPABLE = new Set([',', '=', ' ', '"', '\\']);

const INTEGER = /^-?[0-9]+i$/;
const UNSIGNED = /^[0-9]+u$/;
const FLOAT = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const TRUE = new Set(['t', 'T', 'true', 'True', 'TRUE']);
const FALSE = new Set(['f', 'F', 'false', 'False', 'FALSE']);

class LineReader {
  pos = 0;

  constructor(private readonly line: string) {}

  fail(what: string): never {
    throw new Error(`influx: ${what} at character ${this.pos} of ${JSON.stringify(this.line.slice(0, 80))}`);
  }

  peek(): string | undefined {
    return this.line[this.pos];
  }

  atEnd(): boolean {
    return this.pos >= this.line.length;
  }

  expect(char: string): void {
    if (this.line[this.pos] !== char) this.fail(`expected ${JSON.stringify(char)}`);
    this.pos++;
  }

  spaces(): void {
    const start = this.pos;
    while (this.line[this.pos] === ' ') this.pos++;
    if (this.pos === start) this.fail('expected a space');
  }

  /** A measurement, tag key, tag value or field key, up to an unescaped end character. */
  name(end: ReadonlySet<string>): string {
    const line = this.line;
    let result = '';
    while (this.pos < line.length) {
      const c = line[this.pos];
      if (end.has(c)) break;
      // one frame is one line; names cannot hold a line break (nor can the encoder write one)
      if (c === '\n' || c === '\r') this.fail('line break inside a name');
      if (c === '\\' && this.pos + 1 < line.length && NAME_ESCAPABLE.has(line[this.pos + 1])) {
        result += line[this.pos + 1];
        this.pos += 2;
      } else {
        result += c;
        this.pos++;
      }
    }
    return result;
  }

  fieldValue(): FieldValue {
    if (this.peek() === '"') return this.quotedString();
    const start = this.pos;
    while (this.pos < this.line.length && this.line[this.pos] !== ',' && this.line[this.pos] !== ' ') this.pos++;
    const text = this.line.slice(start, this.pos);
    if (INTEGER.test(text)) return this.integer(text.slice(0, -1), I64_MIN, I64_MAX, 'integer');
    if (UNSIGNED.test(text)) return this.integer(text.slice(0, -1), 0n, U64_MAX, 'unsigned integer');
    if (TRUE.has(text)) return true;
    if (FALSE.has(text)) return false;
    if (FLOAT.test(text)) return Number(text);
    this.pos = start;
    return this.fail(text === '' ? 'missing field value' : `bad field value ${JSON.stringify(text)}`);
  }

  private integer(digits: string, min: bigint, max: bigint, what: string): bigint {
    const value = BigInt(digits);
    if (value < min || value > max) this.fail(`${what} ${digits} out of range`);
    return value;
  }

  private quotedString(): string {
    const line = this.line;
    this.pos++; // opening quote
    let result = '';
    while (this.pos < line.length) {
      const c = line[this.pos];
      if (c === '"') {
        this.pos++;
        return result;
      }
      if (c === '\\' && (line[this.pos + 1] === '"' || line[this.pos + 1] === '\\')) {
        result += line[this.pos + 1];
        this.pos += 2;
      } else {
        result += c;
        this.pos++;
      }
    }
    return this.fail('unterminated string field');
  }

  timestamp(): bigint {
    const match = /^-?[0-9]+/.exec(this.line.slice(this.pos));
    if (!match) return this.fail('bad timestamp');
    this.pos += match[0].length;
    const value = BigInt(match[0]);
    if (value < I64_MIN || value > I64_MAX) this.fail('timestamp out of range');
    return value;
  }
}
