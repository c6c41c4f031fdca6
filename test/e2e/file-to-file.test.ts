import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { xz } from '@napi-rs/lzma';
import { call, eventually, startRuntime, type Started } from '../helpers/runtime';

const DATA = join(__dirname, '../../../test/fixtures/data/data.json.xz');

async function publishFlow(rt: Started, source: string, target: string): Promise<void> {
  const artefacts: [string, unknown][] = [
    ['onramp', { id: 'reader', type: 'file', codec: 'json', config: { source } }],
    [
      'pipeline',
      {
        id: 'relay',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'pass', type: 'passthrough' }],
        links: { in: ['pass'], pass: ['out'] },
      },
    ],
    ['offramp', { id: 'writer', type: 'file', codec: 'json', config: { file: target } }],
    [
      'binding',
      {
        id: 'copy',
        links: {
          '/onramp/reader/{instance}/out': ['/pipeline/relay/{instance}/in'],
          '/pipeline/relay/{instance}/out': ['/offramp/writer/{instance}/in'],
        },
      },
    ],
  ];
  for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
}

describe('end to end: file onramp -> pipeline -> file offramp, published over REST', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-e2e-'));
  });
  afterEach(() => rt.stop());

  it('delivers every line of the xz sample data, in order and re-encoded compactly, then tears everything down', async () => {
    const target = join(dir, 'out.json');
    await publishFlow(rt, DATA, target);
    expect((await call(rt.base, 'POST', '/binding/copy/one')).status).to.equal(201);

    const expected = xz
      .decompressSync(readFileSync(DATA))
      .toString('utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.stringify(JSON.parse(l)));
    expect(expected).to.have.length(100);
    const lines = () =>
      readFileSync(target, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0);
    await eventually(() => lines().length >= expected.length, 5000, 'all lines in the output file');
    expect(lines()).to.deep.equal(expected);

    expect((await call(rt.base, 'DELETE', '/binding/copy/one')).status).to.equal(200);
    for (const [kind, id] of [
      ['binding', 'copy'],
      ['pipeline', 'relay'],
      ['onramp', 'reader'],
      ['offramp', 'writer'],
    ]) {
      expect((await call(rt.base, 'DELETE', `/${kind}/${id}`)).status, kind).to.equal(200);
    }
    expect((await call(rt.base, 'GET', '/onramp')).body).to.deep.equal([]);
  });

  it('sends undecodable lines to the err port and keeps every good line', async () => {
    const source = join(dir, 'in.json');
    writeFileSync(source, '{"a":1}\nnot json\n{"a":2}\n\n{"a":3}');
    const target = join(dir, 'out.json');
    const errors = join(dir, 'err.json');
    await publishFlow(rt, source, target);
    await call(rt.base, 'POST', '/offramp', { body: { id: 'errors', type: 'file', config: { file: errors } } });
    await call(rt.base, 'POST', '/binding', {
      body: {
        id: 'errs',
        links: {
          '/onramp/reader/{instance}/err': ['/pipeline/system::passthrough/{instance}/in'],
          '/pipeline/system::passthrough/{instance}/out': ['/offramp/errors/{instance}/in'],
        },
      },
    });
    // the err link first, so the onramp starts reading only when both are in place
    expect((await call(rt.base, 'POST', '/binding/errs/one')).status).to.equal(201);
    expect((await call(rt.base, 'POST', '/binding/copy/one')).status).to.equal(201);
    const read = (file: string) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0);
    await eventually(() => read(target).length === 3 && read(errors).length === 2, 5000, 'good and bad lines');
    expect(read(target)).to.deep.equal(['{"a":1}', '{"a":2}', '{"a":3}']);
    const errs = read(errors).map((l) => JSON.parse(l));
    expect(errs[0].raw).to.equal('not json');
    expect(errs[0].error).to.be.a('string').and.not.empty;
    expect(errs[0].source_id).to.equal('/onramp/reader/one');
    expect(errs[1].raw).to.equal('');
  });
});
