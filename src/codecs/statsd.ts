import type { CodecType } from './codec';
import { integerValue } from './integers';

/**
 * statsd: one metric per frame, `metric:value|type[|@sample_rate]`, types
 * `c` (counter), `g` (gauge), `ms` (timer), `h` (histogram), `s` (set).
 *
 * Decodes to `{metric, [action], type, [sample_rate], value}` in that key
 * order. A gauge value with a sign is a change, not a level: `+5` gives
 * `action: "add"` and `-5` gives `action: "sub"` with value 5. Values are
 * numbers (BigInt for integers beyond 2^53).
 *
 * Integers, exactly: a value without fraction or exponent from -2^53 to 2^53
 * decodes to a number, beyond to a BigInt of any size (statsd itself sets no
 * limit); one with a fraction or exponent is a double, and one beyond the
 * doubles (`1e400`) is an error. A BigInt encodes as its exact digits; a
 * double whose value is an integer beyond ±2^53 encodes with `.0`, so it
 * reads back as the same double.
 */
export const statsd: CodecType = {
  name: 'statsd',
  summary: 'One statsd metric per frame, `metric:value|type[|@sample_rate]`, as `{metric, [action], type, [sample_rate], value}`.',
  create: () => ({
    name: 'statsd',
    decode: (data) => decodeStatsd(data.toString('utf8')),
    encode: (value) => Buffer.from(encodeStatsd(value), 'utf8'),
  }),
};

const TYPES = new Set(['c', 'g', 'ms', 'h', 's']);
const NUMBER = /^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

interface StatsdMetric {
  metric: string;
  action?: 'add' | 'sub';
  type: string;
  sample_rate?: number;
  value: number | bigint;
}

function decodeStatsd(text: string): StatsdMetric {
  const line = text.replace(/[\r\n]+$/, '');
  const colon = line.indexOf(':');
  if (colon <= 0) throw new Error(`statsd: expected metric:value|type in ${JSON.stringify(line.slice(0, 80))}`);
  const metric = line.slice(0, colon);
  // what the encoder refuses to write: a name holding the field separator or a line break
  if (/[|\n\r]/.test(metric)) throw new Error(`statsd: bad metric name ${JSON.stringify(metric.slice(0, 80))}`);
  // split gives at least one part; the type and the rate may be missing
  const [valueText, type, rate, ...rest] = line.slice(colon + 1).split('|') as [string, string?, string?, ...string[]];
  if (type === undefined || !TYPES.has(type)) throw new Error(`statsd: unknown type ${JSON.stringify(type ?? '')}`);
  if (!NUMBER.test(valueText)) throw new Error(`statsd: bad value ${JSON.stringify(valueText)}`);
  if (rest.length > 0) throw new Error('statsd: unexpected fields after the sample rate');
  const result: StatsdMetric = { metric, type, value: 0 };
  let magnitude = valueText;
  if (type === 'g' && (valueText.startsWith('+') || valueText.startsWith('-'))) {
    result.action = valueText.startsWith('+') ? 'add' : 'sub';
    magnitude = valueText.slice(1);
  }
  if (rate !== undefined) {
    if (!rate.startsWith('@') || !NUMBER.test(rate.slice(1))) throw new Error(`statsd: bad sample rate ${JSON.stringify(rate)}`);
    result.sample_rate = finite(Number(rate.slice(1)), 'sample rate', rate);
  }
  result.value = parseValue(magnitude);
  // rebuild in the documented key order: metric, [action], type, [sample_rate], value
  const { action, sample_rate: sampleRate, value } = result;
  return {
    metric,
    ...(action ? { action } : {}),
    type,
    ...(sampleRate !== undefined ? { sample_rate: sampleRate } : {}),
    value,
  };
}

function parseValue(text: string): number | bigint {
  if (/[.eE]/.test(text)) return finite(Number(text), 'value', text);
  return integerValue(BigInt(text));
}

/** A float beyond the doubles (`1e400`) is an error, not Infinity: no statsd value means that, and none could be sent on. */
function finite(value: number, what: string, text: string): number {
  if (!Number.isFinite(value)) throw new Error(`statsd: ${what} ${JSON.stringify(text)} is out of range`);
  return value;
}

function encodeStatsd(value: unknown): string {
  if (typeof value !== 'object' || value === null) throw new Error('statsd: expected an object with metric, type and value');
  const { metric, action, type, sample_rate: sampleRate, value: amount } = value as Record<string, unknown>;
  if (typeof metric !== 'string' || metric === '' || /[:|\n\r]/.test(metric)) {
    throw new Error('statsd: metric must be a non-empty string without : | or line breaks');
  }
  if (typeof type !== 'string' || !TYPES.has(type)) throw new Error(`statsd: unknown type ${JSON.stringify(type)}`);
  if (!(typeof amount === 'bigint' || (typeof amount === 'number' && Number.isFinite(amount)))) {
    throw new Error('statsd: value must be a finite number');
  }
  let valueText = String(amount);
  // an integral double beyond 2^53 would read back as a BigInt: mark it as a float
  if (typeof amount === 'number' && Number.isInteger(amount) && Math.abs(amount) > 2 ** 53 && !/[.eE]/.test(valueText)) valueText += '.0';
  if (action !== undefined && action !== null) {
    if (type !== 'g' || (action !== 'add' && action !== 'sub')) throw new Error('statsd: action must be add or sub, on a gauge');
    if (amount < 0) throw new Error('statsd: a gauge change takes a non-negative value');
    valueText = `${action === 'add' ? '+' : '-'}${valueText}`;
  } else if (type === 'g' && (amount < 0 || Object.is(amount, -0))) {
    // a signed gauge value reads as a change, so a negative level cannot be sent as one
    throw new Error('statsd: a gauge level cannot be negative (use action "sub")');
  }
  let line = `${metric}:${valueText}|${type}`;
  if (sampleRate !== undefined && sampleRate !== null) {
    if (typeof sampleRate !== 'number' || !Number.isFinite(sampleRate)) throw new Error('statsd: sample_rate must be a number');
    line += `|@${sampleRate}`;
  }
  return line;
}
