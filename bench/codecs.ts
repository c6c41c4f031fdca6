/**
 * Codec throughput on the 100 sample events of data.json.xz, looped for a
 * few seconds per measurement: events/s of decode and of encode for json,
 * msgpack, influx and string, beside raw JSON.parse/JSON.stringify.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/codecs.js [seconds per measurement, default 2]
 */
import { xz } from '@napi-rs/lzma';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { builtinCodec } from './data';

const seconds = Number(process.argv[2] ?? 2);
const INGEST_NS = 1_700_000_000_000_000_000n;

function sampleEvents(): Buffer[] {
  const file = resolve(__dirname, '../../bench/data/data.json.xz');
  if (!existsSync(file)) throw new Error(`${file} is missing`);
  const text = xz.decompressSync(readFileSync(file)).toString('utf8');
  return text.split('\n').filter((line) => line.length > 0).map((line) => Buffer.from(line, 'utf8'));
}

/** Runs `once` over every input until the time is up; returns items per second. */
function measure<T>(inputs: T[], once: (input: T) => unknown): number {
  let sink = 0; // keeps results alive so the work cannot be optimised away
  for (let warm = 0; warm < 200; warm++) for (const input of inputs) sink ^= once(input) === undefined ? 1 : 0;
  const budgetNs = BigInt(Math.round(seconds * 1e9));
  const start = process.hrtime.bigint();
  let count = 0;
  while (process.hrtime.bigint() - start < budgetNs) {
    for (let round = 0; round < 10; round++) for (const input of inputs) sink ^= once(input) === undefined ? 1 : 0;
    count += inputs.length * 10;
  }
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  if (sink === -1) console.log(sink);
  return count / elapsed;
}

/** An influx point per event: a measurement, two tags, and its numeric, string and boolean top-level fields. */
function toPoint(event: Record<string, unknown>): unknown {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (typeof value === 'number' && Number.isInteger(value)) fields[key] = BigInt(value);
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') fields[key] = value;
  }
  return {
    measurement: 'logs',
    tags: { index_type: String(event.index_type), logger_name: String(event.logger_name) },
    fields,
    timestamp: INGEST_NS,
  };
}

function main(): void {
  const lines = sampleEvents();
  const json = builtinCodec('json');
  const events = lines.map((line) => json.decode(line, INGEST_NS) as Record<string, unknown>);
  const rows: [string, number, number][] = [];

  rows.push([
    'raw JSON.parse / JSON.stringify',
    measure(lines, (line) => JSON.parse(line.toString('utf8'))),
    measure(events, (event) => Buffer.from(JSON.stringify(event), 'utf8')),
  ]);
  rows.push(['json', measure(lines, (line) => json.decode(line, INGEST_NS)), measure(events, (event) => json.encode(event))]);

  const msgpack = builtinCodec('msgpack');
  const packed = events.map((event) => msgpack.encode(event));
  rows.push(['msgpack', measure(packed, (bytes) => msgpack.decode(bytes, INGEST_NS)), measure(events, (event) => msgpack.encode(event))]);

  const influx = builtinCodec('influx');
  const points = events.map(toPoint);
  const influxLines = points.map((point) => influx.encode(point));
  rows.push(['influx', measure(influxLines, (line) => influx.decode(line, INGEST_NS)), measure(points, (point) => influx.encode(point))]);

  const string = builtinCodec('string');
  const texts = lines.map((line) => line.toString('utf8'));
  rows.push(['string', measure(lines, (line) => string.decode(line, INGEST_NS)), measure(texts, (text) => string.encode(text))]);

  console.log(`codec throughput, ${lines.length} events of data.json.xz, ${seconds}s per measurement, node ${process.version}`);
  console.log(`${'codec'.padEnd(32)} ${'decode ev/s'.padStart(14)} ${'encode ev/s'.padStart(14)}`);
  for (const [name, decode, encode] of rows) {
    console.log(`${name.padEnd(32)} ${Math.round(decode).toLocaleString('en-US').padStart(14)} ${Math.round(encode).toLocaleString('en-US').padStart(14)}`);
  }
}

main();
