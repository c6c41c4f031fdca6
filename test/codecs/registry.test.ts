import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { avro } from '../../src/codecs/avro';
import type { Codec } from '../../src/codecs/codec';
import { protobufCodec } from '../../src/codecs/protobuf';
import { requireService } from '../helpers/services';
import { freePort } from '../connectors/net-helpers';
import { AVRO_SCHEMA_FILE, avroOrder } from './schema-support';
import fc from 'fast-check';
import { INGEST_NS } from './support';

let counter = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}`;

const SCHEMA = {
  type: 'record',
  name: 'N',
  namespace: 'reg',
  fields: [
    { name: 'n', type: 'long' },
    { name: 's', type: 'string' },
  ],
};

describe('avro and protobuf codecs through a real schema registry (Apicurio, Confluent API)', function () {
  this.timeout(30000);
  let url: string;

  before(async function () {
    const { host, port } = await requireService(this, 'registry');
    url = `http://${host}:${port}/apis/ccompat/v7`;
  });

  /** the registry's own answer, asked directly */
  const ask = async (method: string, path: string, body?: object) => {
    const response = await fetch(url + path, {
      method,
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const opened = async (codec: Codec, side: 'onramp' | 'offramp') => {
    await codec.open!(side);
    return codec;
  };

  it('encodes in the Confluent wire format with the id the registry gave the schema, and decodes it by that id', async () => {
    const topic = unique('orders');
    const writer = await opened(avro.create({ schema: SCHEMA, registry: { url, topic, auto_register: true } }), 'offramp');
    const frame = writer.encode({ n: 2n ** 63n - 1n, s: 'x' });
    const latest = await ask('GET', `/subjects/${topic}-value/versions/latest`);
    expect(latest.status).to.equal(200);
    const id = latest.body.id as number;
    const header = Buffer.alloc(5);
    header.writeUInt32BE(id, 1);
    // magic 0, the id big-endian, then the bare Avro datum
    expect(frame.subarray(0, 5).toString('hex')).to.equal(header.toString('hex'));
    expect(frame.subarray(5).toString('hex')).to.equal(
      avro
        .create({ schema: SCHEMA })
        .encode({ n: 2n ** 63n - 1n, s: 'x' })
        .toString('hex'),
    );
    // a reader that knows only the registry: the writer's schema is fetched by id
    const reader = await opened(avro.create({ registry: { url } }), 'onramp');
    expect(reader.decode(frame, INGEST_NS)).to.deep.equal({ n: 2n ** 63n - 1n, s: 'x' });
  });

  it('round-trips random records of a schema through the registry, longs exact', async () => {
    const topic = unique('props');
    const schema = JSON.parse(readFileSync(AVRO_SCHEMA_FILE, 'utf8')) as object;
    const writer = await opened(avro.create({ schema, registry: { url, topic, auto_register: true } }), 'offramp');
    const reader = await opened(avro.create({ registry: { url, topic } }), 'onramp');
    fc.assert(
      fc.property(avroOrder(), (record) => {
        expect(reader.decode(writer.encode(record), INGEST_NS)).to.deep.equal(record);
      }),
      { numRuns: 100 },
    );
  });

  it('encodes with the latest version of the subject when the config has no schema; a schema registered after start decodes too', async () => {
    const subject = unique('latest');
    const first = await ask('POST', `/subjects/${subject}/versions`, { schema: JSON.stringify(SCHEMA) });
    const reader = await opened(avro.create({ registry: { url, subject } }), 'onramp');
    const writer = await opened(avro.create({ registry: { url, subject } }), 'offramp');
    const frame = writer.encode({ n: 1, s: 'a' });
    expect(frame.readUInt32BE(1)).to.equal(first.body.id);
    // version 2 (a new field with a default) is registered after the reader started: its id is fetched on first sight
    const v2 = { ...SCHEMA, fields: [...SCHEMA.fields, { name: 'extra', type: 'int', default: 7 }] };
    const second = await ask('POST', `/subjects/${subject}/versions`, { schema: JSON.stringify(v2) });
    expect(second.body.id).to.not.equal(first.body.id);
    const later = await opened(avro.create({ schema: v2, registry: { url, subject } }), 'offramp');
    expect(reader.decode(later.encode({ n: 2, s: 'b', extra: 3 }), INGEST_NS)).to.deep.equal({ n: 2, s: 'b', extra: 3 });
    // a reader with a schema of its own reads every writer's frames as that schema (Avro schema resolution)
    const resolving = await opened(avro.create({ schema: v2, registry: { url, subject } }), 'onramp');
    expect(resolving.decode(frame, INGEST_NS)).to.deep.equal({ n: 1, s: 'a', extra: 7 });
  });

  it('refuses to encode with a schema the subject does not have unless auto_register is set', async () => {
    const topic = unique('strict');
    const codec = avro.create({ schema: SCHEMA, registry: { url, topic, auto_register: false } });
    let message = '';
    await codec.open!('offramp').catch((err: unknown) => (message = (err as Error).message));
    expect(message).to.equal(`the schema is not registered under subject '${topic}-value' at ${url}: register it, or set registry.auto_register: true`);
    const nothing = avro.create({ registry: { url } });
    message = '';
    await nothing.open!('offramp').catch((err: unknown) => (message = (err as Error).message));
    expect(message).to.equal('avro: encoding through a registry needs registry.topic or registry.subject');
  });

  it('turns a frame it cannot decode into an error naming the cause: no magic byte, an unknown id (asked once), a schema of another type', async () => {
    const reader = await opened(avro.create({ registry: { url } }), 'onramp');
    expect(() => reader.decode(Buffer.from('0100000001', 'hex'), INGEST_NS)).to.throw('avro: first byte is 1, not the schema registry magic byte 0');
    expect(() => reader.decode(Buffer.from('0000', 'hex'), INGEST_NS)).to.throw('avro: frame of 2 bytes is shorter than the 5-byte schema registry header');
    const unknown = Buffer.from('007ffffff000', 'hex');
    expect(() => reader.decode(unknown, INGEST_NS)).to.throw(new RegExp(`^schema id 2147483632: ${url}/schemas/ids/2147483632 answered 404`));
    expect(() => reader.decode(unknown, INGEST_NS)).to.throw('(not asked again for 10 s)');
    const proto = await ask('POST', `/subjects/${unique('proto')}/versions`, {
      schemaType: 'PROTOBUF',
      schema: 'syntax = "proto3"; message P { int32 a = 1; }',
    });
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), Buffer.from([0, 8, 1])]);
    frame.writeUInt32BE(proto.body.id as number, 1);
    expect(() => reader.decode(frame, INGEST_NS)).to.throw(`avro: schema id ${proto.body.id as number} from ${url} is a PROTOBUF schema, not AVRO`);
    const protoReader = await opened(protobufCodec.create({ registry: { url } }), 'onramp');
    expect(protoReader.decode(frame, INGEST_NS)).to.deep.equal({ a: 1 });
  });

  it('fails the activation when the registry cannot be reached', async () => {
    const port = await freePort();
    const codec = avro.create({ schema: SCHEMA, registry: { url: `http://127.0.0.1:${port}`, topic: 't', timeout_ms: 2000 } });
    let message = '';
    await codec.open!('offramp').catch((err: unknown) => (message = (err as Error).message));
    expect(message).to.match(new RegExp(`^cannot reach http://127.0.0.1:${port}/subjects/t-value: fetch failed: .*ECONNREFUSED`));
  });

  it('protobuf: writes the message indexes of the configured message after the id, and a registry-only reader picks the message by them', async () => {
    const topic = unique('pb');
    const schema = 'syntax = "proto3"; package reg; message First { string a = 1; } message Second { int64 b = 1; message Inner { sint64 c = 1; } }';
    const second = await opened(protobufCodec.create({ schema, message: 'reg.Second', registry: { url, topic, auto_register: true } }), 'offramp');
    const inner = await opened(protobufCodec.create({ schema, message: 'reg.Second.Inner', registry: { url, topic, auto_register: true } }), 'offramp');
    const first = await opened(protobufCodec.create({ schema, registry: { url, topic, auto_register: true } }), 'offramp');
    const a = second.encode({ b: 2n ** 63n - 1n });
    // indexes [1]: count 1, index 1, both zigzag varints
    expect(a.subarray(5, 7).toString('hex')).to.equal('0202');
    // indexes [1, 0]: count 2, then 1 and 0
    const b = inner.encode({ c: -2 });
    expect(b.subarray(5, 8).toString('hex')).to.equal('040200');
    // the first message: the single byte 0
    const c = first.encode({ a: 'x' });
    expect(c.subarray(5, 6).toString('hex')).to.equal('00');
    const reader = await opened(protobufCodec.create({ registry: { url } }), 'onramp');
    expect(reader.decode(a, INGEST_NS)).to.deep.equal({ b: 2n ** 63n - 1n });
    expect(reader.decode(b, INGEST_NS)).to.deep.equal({ c: -2 });
    expect(reader.decode(c, INGEST_NS)).to.deep.equal({ a: 'x' });
  });
});
