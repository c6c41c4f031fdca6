import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfigFile } from '../../src/config/load';
import { runEddy } from '../helpers/cli';

describe('relative paths in a config file', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-relative-'))));

  it("are made absolute against the file's folder when it is read: ramp configs, codec configs, pipeline nodes; nothing else", async () => {
    const config = join(dir, 'sub', 'flows.yaml');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(
      config,
      `onramp:
  - { id: reader, type: file, config: { source: data/in.json }, codec: { name: avro, config: { schema_file: ../schemas/e.avsc } } }
  - { id: web, type: rest, config: { host: 127.0.0.1, port: 0, tls: { cert: certs/a.pem, key: /etc/eddy/a.key } } }
offramp:
  - { id: writer, type: file, config: { file: out.json } }
pipeline:
  - id: p
    nodes:
      - { id: owner, type: enrich::lookup, config: { table: { file: owners.csv, key: host }, key: event.host, into: owner } }
      - { id: keep, type: qos::wal, config: { dir: ./wal } }
      - { id: pass, type: passthrough, config: { note: not/a/path } }
flow:
  - { id: f, from: reader, via: p, to: writer }
`,
    );
    const read = await readConfigFile(config);
    const sub = join(dir, 'sub');
    const [reader, web] = read.onramp as { config: Record<string, unknown>; codec?: { config: Record<string, unknown> } }[];
    expect(reader.config.source).to.equal(join(sub, 'data/in.json'));
    expect(reader.codec!.config.schema_file).to.equal(join(dir, 'schemas/e.avsc'));
    expect(web.config.tls).to.deep.equal({ cert: join(sub, 'certs/a.pem'), key: '/etc/eddy/a.key' });
    expect((read.offramp as { config: Record<string, unknown> }[])[0].config.file).to.equal(join(sub, 'out.json'));
    const nodes = (read.pipeline as { nodes: { config: Record<string, unknown> }[] }[])[0].nodes;
    expect(nodes[0].config.table).to.deep.equal({ file: join(sub, 'owners.csv'), key: 'host' });
    expect(nodes[1].config.dir).to.equal(join(sub, 'wal'));
    expect(nodes[2].config.note).to.equal('not/a/path');
  });

  it('a config run from another working directory finds its input file and writes beside itself', async () => {
    writeFileSync(join(dir, 'in.json'), '{"n":1}\n{"n":2}\n');
    const config = join(dir, 'copy.yaml');
    writeFileSync(
      config,
      `onramp:
  - { id: reader, type: file, config: { source: in.json, close_on_done: true, sleep_on_done: 100 } }
offramp:
  - { id: writer, type: file, config: { file: out.json } }
flow:
  - { id: copy, from: reader, to: writer }
`,
    );
    const elsewhere = mkdtempSync(join(tmpdir(), 'eddy-relative-cwd-'));
    const run = await runEddy(['server', 'run', '-f', config, '--no-api'], { cwd: elsewhere });
    expect(run.code, run.stderr).to.equal(0);
    expect(readFileSync(join(dir, 'out.json'), 'utf8')).to.equal('{"n":1}\n{"n":2}\n');
  });
});
