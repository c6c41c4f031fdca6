import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { xz } from '@napi-rs/lzma';
import { msgpack } from '../../src/codecs/msgpack';
import { call, eventually, startRuntime, type Started } from '../helpers/runtime';

const DATA = join(__dirname, '../../../test/fixtures/data/data.json.xz');

/** file onramp (with the given codec and preprocessors) -> passthrough pipeline -> file offramp (json), over REST. */
async function runFlow(rt: Started, onramp: Record<string, unknown>, target: string): Promise<void> {
  const bodies: [string, unknown][] = [
    ['onramp', { id: 'reader', type: 'file', ...onramp }],
    ['pipeline', { id: 'relay', interface: {}, nodes: [{ id: 'pass', type: 'passthrough' }], links: { in: ['pass'], pass: ['out'] } }],
    ['offramp', { id: 'writer', type: 'file', codec: 'json', config: { file: target } }],
    [
      'binding',
      {
        id: 'flow',
        links: {
          '/onramp/reader/{instance}/out': ['/pipeline/relay/{instance}/in'],
          '/pipeline/relay/{instance}/out': ['/offramp/writer/{instance}/in'],
        },
      },
    ],
  ];
  for (const [kind, body] of bodies) {
    const reply = await call(rt.base, 'POST', `/${kind}`, { body });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
  }
  expect((await call(rt.base, 'POST', '/binding/flow/main')).status).to.equal(201);
}

describe('end to end: codecs and preprocessors through the runtime', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-codecs-'));
  });
  afterEach(() => rt.stop());

  it('file [base64] + msgpack in, json out: every sample event arrives intact and in order', async () => {
    const events = xz
      .decompressSync(readFileSync(DATA))
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const codec = msgpack.create();
    const source = join(dir, 'in.msgpack.b64');
    writeFileSync(source, events.map((e) => codec.encode(e).toString('base64')).join('\n') + '\n');
    const target = join(dir, 'out.json');
    await runFlow(rt, { codec: 'msgpack', preprocessors: ['base64'], config: { source } }, target);
    const lines = () => readFileSync(target, 'utf8').split('\n').filter(Boolean);
    await eventually(() => lines().length === events.length, 5000, 'all events');
    expect(lines()).to.deep.equal(events.map((e) => JSON.stringify(e)));
  });

  it('influx in, json out: typed fields, escaped tags and nanosecond timestamps survive exactly', async () => {
    const source = join(dir, 'in.influx');
    writeFileSync(
      source,
      [
        'cpu,host=server\\ 01,region=eu\\,west usage=0.5,cores=8i,up=true,name="a \\"quoted\\" one" 1700000000123456789',
        '# a comment line makes no event',
        'mem free=12u 1700000000000000001',
      ].join('\n') + '\n',
    );
    const target = join(dir, 'out.json');
    await runFlow(rt, { codec: 'influx', config: { source } }, target);
    const lines = () => readFileSync(target, 'utf8').split('\n').filter(Boolean);
    await eventually(() => lines().length === 2, 5000, 'two events');
    expect(lines()).to.deep.equal([
      '{"measurement":"cpu","tags":{"host":"server 01","region":"eu,west"},"fields":{"usage":0.5,"cores":8,"up":true,"name":"a \\"quoted\\" one"},"timestamp":1700000000123456789}',
      '{"measurement":"mem","tags":{},"fields":{"free":12},"timestamp":1700000000000000001}',
    ]);
  });

  it('rejects an unknown codec in a codec_map at publish time', async () => {
    const reply = await call(rt.base, 'POST', '/onramp', {
      body: { id: 'reader', type: 'file', codec_map: { 'application/json': 'jsonish' }, config: { source: '/dev/null' } },
    });
    expect(reply.status).to.equal(400);
    expect(reply.body)
      .to.have.property('error')
      .that.matches(/codec_map\.application\/json: must be one of/);
  });
});
