/**
 * Codec throughput on the 100 sample events of data.json.xz, looped for a
 * few seconds per measurement: events/s of decode and of encode for json,
 * msgpack, influx and string, beside raw JSON.parse/JSON.stringify; and for
 * avro and protobuf (the events under a schema of their fields, `doc-type`
 * renamed `doc_type`) beside a raw loop with the same library (avsc with its
 * own long type and records; protobufjs decode + toObject, fromObject +
 * encode), which does none of eddy's value mapping (exact int64, plain
 * objects, enum names) or checks.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/codecs.js [seconds per measurement, default 2]
 */
import { xz } from '@napi-rs/lzma';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as avsc from 'avsc';
import * as protobuf from 'protobufjs';
import { builtinCodecs } from '../src/codecs';
import { builtinCodec } from './data';

const seconds = Number(process.argv[2] ?? 2);
const INGEST_NS = 1_700_000_000_000_000_000n;

function sampleEvents(): Buffer[] {
  const file = resolve(__dirname, '../../bench/data/data.json.xz');
  if (!existsSync(file)) throw new Error(`${file} is missing`);
  const text = xz.decompressSync(readFileSync(file)).toString('utf8');
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => Buffer.from(line, 'utf8'));
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

const EVENT_AVRO = {
  type: 'record',
  name: 'Event',
  fields: [
    ...['about', 'guid'].map((name) => ({ name, type: 'string' })),
    { name: 'abool', type: 'boolean' },
    { name: 'aint', type: 'long' },
    { name: 'short_message', type: 'string' },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'array', type: { type: 'array', items: 'long' } },
    ...['index_type', 'logger_name', 'syslog_hostname', 'application', 'type', 'doc_type'].map((name) => ({ name, type: 'string' })),
  ],
};
const EVENT_PROTO = `syntax = "proto3";
message Event {
  string about = 1; string guid = 2; bool abool = 3; int64 aint = 4; string short_message = 5;
  repeated string tags = 6; repeated int64 array = 7; string index_type = 8; string logger_name = 9;
  string syslog_hostname = 10; string application = 11; string type = 12; string doc_type = 13;
}`;

/** The sample events under the schemas: `doc-type` is no Avro or protobuf field name. */
function schemaEvent(event: Record<string, unknown>): Record<string, unknown> {
  const { 'doc-type': docType, ...rest } = event;
  return { ...rest, doc_type: docType };
}

function schemaRows(events: Record<string, unknown>[]): [string, number, number][] {
  const rows: [string, number, number][] = [];
  const typed = events.map(schemaEvent);
  const make = (name: string, config: Record<string, unknown>) => builtinCodecs.find((t) => t.name === name)!.create(config);

  const avro = make('avro', { schema: EVENT_AVRO });
  const avroFrames = typed.map((e) => avro.encode(e));
  rows.push(['avro', measure(avroFrames, (f) => avro.decode(f, INGEST_NS)), measure(typed, (e) => avro.encode(e))]);
  const rawAvro = avsc.Type.forSchema(EVENT_AVRO as avsc.Schema);
  rows.push(['raw avsc fromBuffer / toBuffer', measure(avroFrames, (f) => rawAvro.fromBuffer(f)), measure(typed, (e) => rawAvro.toBuffer(e))]);

  const proto = make('protobuf', { schema: EVENT_PROTO });
  const protoFrames = typed.map((e) => proto.encode(e));
  rows.push(['protobuf', measure(protoFrames, (f) => proto.decode(f, INGEST_NS)), measure(typed, (e) => proto.encode(e))]);
  const rawType = protobuf.parse(EVENT_PROTO, { keepCase: true }).root.lookupType('Event');
  rows.push([
    'raw protobufjs decode / encode',
    measure(protoFrames, (f) => rawType.toObject(rawType.decode(f), { longs: Number })),
    measure(typed, (e) => rawType.encode(rawType.fromObject(e)).finish()),
  ]);
  return rows;
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

  rows.push(...schemaRows(events));

  console.log(`codec throughput, ${lines.length} events of data.json.xz, ${seconds}s per measurement, node ${process.version}`);
  console.log(`${'codec'.padEnd(32)} ${'decode ev/s'.padStart(14)} ${'encode ev/s'.padStart(14)}`);
  for (const [name, decode, encode] of rows) {
    console.log(`${name.padEnd(32)} ${Math.round(decode).toLocaleString('en-US').padStart(14)} ${Math.round(encode).toLocaleString('en-US').padStart(14)}`);
  }
}

main();
