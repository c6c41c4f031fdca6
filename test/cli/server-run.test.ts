import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunArgs } from '../../src/cli/server-run';
import { EDDY, runEddy } from '../helpers/cli';
import { docBlock } from '../helpers/readme';
import { runEddyProcess } from '../connectors/example-runner';

describe('eddy server run', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-cli-'))));

  it('parses its arguments', () => {
    expect(parseRunArgs([])).to.deep.include({ files: [], api: true, host: '127.0.0.1', port: 9898 });
    expect(parseRunArgs(['-f', 'a.yaml', 'b.json', '--no-api', '--api-host', '0.0.0.0', '--api-port', '1234'])).to.deep.include({
      files: ['a.yaml', 'b.json'],
      api: false,
      host: '0.0.0.0',
      port: 1234,
    });
    expect(() => parseRunArgs(['--api-port', 'x'])).to.throw(/not a port/);
    expect(() => parseRunArgs(['--frobnicate'])).to.throw(/unknown argument/);
  });

  it('runs a YAML config file to completion: file onramp with close_on_done -> file offramp, exit status 0', async () => {
    const input = join(dir, 'in.json');
    const output = join(dir, 'out.json');
    writeFileSync(input, '{"n":1}\n{"n":2}\n{"n":3}\n');
    const config = join(dir, 'flow.yaml');
    writeFileSync(
      config,
      `onramp:
  - id: reader
    type: file
    config: { source: "${input}", close_on_done: true, sleep_on_done: 200 }
offramp:
  - id: writer
    type: file
    config: { file: "${output}" }
binding:
  - id: copy
    links:
      "/onramp/reader/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/writer/{instance}/in"]
mapping:
  /binding/copy/main: { instance: main }
`,
    );
    const run = await runEddy(['server', 'run', '-f', config, '--no-api']);
    expect(run.code, run.stderr).to.equal(0);
    expect(readFileSync(output, 'utf8')).to.equal('{"n":1}\n{"n":2}\n{"n":3}\n');
  });

  it('runs a JSON config file too', async () => {
    const config = join(dir, 'exit.json');
    writeFileSync(
      config,
      JSON.stringify({
        onramp: [{ id: 'reader', type: 'file', config: { source: join(dir, 'exit.txt') } }],
        offramp: [{ id: 'stop', type: 'exit' }],
        binding: [
          {
            id: 'quit',
            links: {
              '/onramp/reader/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
              '/pipeline/system::passthrough/{instance}/out': ['/offramp/stop/{instance}/in'],
            },
          },
        ],
        mapping: { '/binding/quit/main': { instance: 'main' } },
      }),
    );
    writeFileSync(join(dir, 'exit.txt'), '{"exit": 3}\n');
    const run = await runEddy(['server', 'run', '-f', config, '--no-api']);
    expect(run.code, run.stderr).to.equal(3);
  });

  const invalid: [string, string, RegExp][] = [
    ['unknown onramp type', 'onramp:\n  - id: bad\n    type: bad_onramp\n', /onramp 'bad': type: unknown onramp 'bad_onramp'/],
    ['unknown offramp type', 'offramp:\n  - id: bad\n    type: bad_offramp\n', /offramp 'bad': type: unknown offramp 'bad_offramp'/],
    [
      'bad config field',
      'onramp:\n  - id: tick\n    type: metronome\n    config: { interval: soon }\n',
      /onramp 'tick': config\.interval: 'soon' is not a duration/,
    ],
    ['unknown section', 'onramps: []\n', /unknown section 'onramps' \(did you mean 'onramp'\?\) \(sections: /],
    ['missing binding in a mapping', 'mapping:\n  /binding/none/main: { instance: main }\n', /mapping '\/binding\/none\/main': binding 'none' not found/],
    ['non-string mapping value', 'mapping:\n  /binding/none/main: { instance: 1 }\n', /instance: mapping values must be strings/],
    // the offending line, numbered, and a caret under the column
    [
      'broken YAML',
      'onramp:\n  - id: tick\n    type: metronome\n    config: interval: 20\n',
      /not valid YAML or JSON: Nested mappings are not allowed in compact mappings at line 4, column 13:\n {2}3 \| {5}type: metronome\n {2}4 \| {5}config: interval: 20\n {4}\| {13}\^/,
    ],
  ];
  for (const [what, text, message] of invalid) {
    it(`exits non-zero naming the file, the artefact and the field for ${what}`, async () => {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, text);
      const run = await runEddy(['server', 'run', '-f', file, '--no-api']);
      expect(run.code).to.equal(1);
      expect(run.stderr).to.include(file);
      expect(run.stderr).to.match(message);
    });
  }

  it("shows a YAML syntax error as docs/config-files.md does: the file's line, the one before and a caret", async () => {
    const file = join(dir, 'flows.yaml');
    writeFileSync(file, 'onramp:\n  - id: tick\n    type: metronome\n    config: interval: 20\n');
    const run = await runEddy(['server', 'run', '-f', file, '--no-api']);
    expect(run.code).to.equal(1);
    const documented = docBlock('docs/config-files.md', '# Config files', '').replace('flows.yaml', file);
    expect(run.stderr).to.contain(documented.trimEnd());
  });

  it('shuts down cleanly on SIGTERM, flushing what the offramp received', async () => {
    const output = join(dir, 'ticks.json');
    const config = join(dir, 'ticks.yaml');
    writeFileSync(
      config,
      `onramp:
  - id: tick
    type: metronome
    config: { interval: 20 }
offramp:
  - id: writer
    type: file
    config: { file: "${output}" }
binding:
  - id: ticks
    links:
      "/onramp/tick/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/writer/{instance}/in"]
mapping:
  /binding/ticks/main: { instance: main }
`,
    );
    const lines = () => (existsSync(output) ? readFileSync(output, 'utf8').split('\n').length - 1 : 0);
    const run = await runEddy(['server', 'run', '-f', config, '--no-api'], { signalWhen: () => lines() >= 4 });
    expect(run.code, run.stderr).to.equal(0);
    const ticks = readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(ticks.length).to.be.greaterThan(3);
    expect(ticks.map((t) => t.id)).to.deep.equal(ticks.map((_t, i) => i));
    expect(ticks[0]).to.have.keys(['onramp', 'ingest_ns', 'id']);
  });

  it('serves the API on the given port (0: a free one), names its address on stderr and answers /version', async () => {
    const eddy = runEddyProcess([EDDY, 'server', 'run', '--api-port', '0']);
    let code: number | null;
    try {
      const [, port] = await eddy.logged(/^Listening at: http:\/\/127\.0\.0\.1:(\d+)$/m);
      expect(Number(port)).to.be.greaterThan(0);
      expect(await fetch(`http://127.0.0.1:${port}/version`).then((r) => r.json())).to.deep.equal({
        version: (JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { version: string }).version,
      });
    } finally {
      code = await eddy.stop();
    }
    expect(code, eddy.stderr()).to.equal(0);
  });

  it('prints usage and exits 2 on an unknown command', async () => {
    const run = await runEddy(['serve']);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/usage: eddy server run/);
  });
});
