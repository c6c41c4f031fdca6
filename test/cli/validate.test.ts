import { expect } from 'chai';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main';
import { runEddy } from '../helpers/cli';
import { EXAMPLES } from '../helpers/examples';

/** `eddy ARGV`, in this process, with what it wrote. */
async function eddy(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), env: {} });
  return { code, out, err };
}

/** A tcp port another program (this test) listens on: a start that bound it would fail. */
async function heldPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

/** A file reader -> file writer flow into `output`, and a tcp onramp on `port` into standard output; `extra` appended. */
function flows(input: string, output: string, port: number, extra = ''): string {
  return `onramp:
  - { id: reader, type: file, config: { source: "${input}" } }
  - { id: listener, type: tcp, config: { host: 127.0.0.1, port: ${port} } }
offramp:
  - { id: writer, type: file, config: { file: "${output}" } }
flow:
  - { id: copy, from: reader, to: writer }
  - { id: listen, from: listener, to: system::stdout }
${extra}`;
}

/** A binding whose second link names an offramp nobody declared. */
const BAD_LINK = `binding:
  - id: broken
    links:
      "/onramp/reader/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/nowhere/{instance}/in"]
mapping:
  /binding/broken/main: {}
`;

describe('eddy validate', () => {
  let dir: string;
  let input: string;
  let output: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-validate-'));
    input = join(dir, 'in.json');
    output = join(dir, 'out.json');
    writeFileSync(input, '{"n":1}\n');
    writeFileSync(output, 'what an earlier run wrote\n');
  });

  it('opens nothing: the output file keeps its bytes, and a port another program holds is no obstacle (a start fails on it)', async () => {
    const { port, server } = await heldPort();
    try {
      const config = join(dir, 'flows.yaml');
      writeFileSync(config, flows(input, output, port));
      const run = await eddy(['validate', config]);
      expect(run.err).to.equal('');
      expect(run.out).to.equal(`${config}: ok (1 offramp, 2 onramps, 2 bindings, 2 mappings)\n`);
      expect(run.code).to.equal(0);
      expect(readFileSync(output, 'utf8')).to.equal('what an earlier run wrote\n');
      // the same config started: the tcp onramp tries to bind the port this test holds
      const start = await runEddy(['server', 'run', '-f', config, '--no-api']);
      expect(start.code).to.equal(1);
      expect(start.stderr).to.match(/onramp 'listener' \(tcp\) cannot start: .*EADDRINUSE/);
    } finally {
      server.close();
    }
  });

  it('a mistake in a later link: exit 1 with the message a start stops with, naming the link; the output file keeps its bytes', async () => {
    const { port, server } = await heldPort();
    server.close(); // a free port: a start gets as far as the links
    const config = join(dir, 'flows.yaml');
    writeFileSync(config, flows(input, output, port, BAD_LINK));
    const run = await eddy(['validate', config]);
    expect(run.code).to.equal(1);
    expect(run.out).to.equal('');
    expect(run.err).to.equal(`error: ${config}: mapping '/binding/broken/main': offramp 'nowhere' not found\n`);
    expect(readFileSync(output, 'utf8')).to.equal('what an earlier run wrote\n');
    const start = await runEddy(['server', 'run', '-f', config, '--no-api']);
    expect(start.code).to.equal(1);
    expect(start.stderr.split('\n')).to.include(run.err.trimEnd());
  });

  it('checks the files together, as one start: a later file may use what an earlier one declares', async () => {
    const first = join(dir, 'ramps.yaml');
    const second = join(dir, 'flow.yaml');
    writeFileSync(first, `onramp:\n  - { id: reader, type: file, config: { source: "${input}" } }\n`);
    writeFileSync(second, 'flow:\n  - { id: copy, from: reader, to: system::stdout }\n');
    const together = await eddy(['validate', first, second]);
    expect(together.out).to.equal(`${first}: ok (1 onramp)\n${second}: ok (1 binding, 1 mapping)\n`);
    expect(together.code).to.equal(0);
    // a mapping two files ask for is refused as a start refuses it, before anything would open
    const twice = await eddy(['validate', first, second, second]);
    expect(twice.err).to.equal(`error: ${second}: mappings: instance /binding/copy/main is asked for twice\n`);
    expect(twice.code).to.equal(1);
    const alone = await eddy(['validate', second]);
    expect(alone.err).to.equal(`error: ${second}: mapping '/binding/copy/main': onramp 'reader' not found\n`);
  });

  it('refuses a file a flow reads that does not exist, and an output file whose folder does not exist, naming the field', async () => {
    const config = join(dir, 'missing.yaml');
    writeFileSync(
      config,
      `onramp:\n  - { id: reader, type: file, config: { source: nothing.json } }\nflow:\n  - { id: copy, from: reader, to: system::stdout }\n`,
    );
    const run = await eddy(['validate', config]);
    expect(run.err).to.equal(`error: ${config}: onramp 'reader': config.source: cannot read '${join(dir, 'nothing.json')}': no such file\n`);
    expect(run.code).to.equal(1);

    writeFileSync(
      config,
      `onramp:\n  - { id: reader, type: file, config: { source: in.json } }\n` +
        `offramp:\n  - { id: writer, type: file, config: { file: no/such/out.json } }\n` +
        `flow:\n  - { id: copy, from: reader, to: writer }\n`,
    );
    const unwritable = await eddy(['validate', config]);
    expect(unwritable.err).to.equal(
      `error: ${config}: offramp 'writer': config.file: cannot create '${join(dir, 'no/such/out.json')}': its folder '${join(dir, 'no/such')}' does not exist\n`,
    );
    expect(unwritable.code).to.equal(1);
  });

  it('leaves alone what no mapping activates, as a start does: an unused onramp may name a file that is not there yet', async () => {
    const config = join(dir, 'unused.yaml');
    writeFileSync(config, `onramp:\n  - { id: later, type: file, config: { source: later.json } }\n`);
    const run = await eddy(['validate', config]);
    expect(run.out).to.equal(`${config}: ok (1 onramp)\n`);
    expect(run.code).to.equal(0);
  });

  it('checks --allow-path as eddy server run does', async () => {
    const config = join(dir, 'flow.yaml');
    writeFileSync(config, `onramp:\n  - { id: reader, type: file, config: { source: in.json } }\nflow:\n  - { id: copy, from: reader, to: system::stdout }\n`);
    const elsewhere = mkdtempSync(join(tmpdir(), 'eddy-validate-other-'));
    const run = await eddy(['validate', '--allow-path', elsewhere, config]);
    expect(run.err).to.equal(`error: ${config}: onramp 'reader': config.source: '${input}' is outside the allowed paths (${elsewhere})\n`);
    expect(run.code).to.equal(1);
    expect((await eddy(['validate', '--allow-path', dir, config])).code).to.equal(0);
  });

  it('reads a config from standard input with -; its relative paths are taken from the working directory', async () => {
    const text = `onramp:\n  - { id: reader, type: file, config: { source: in.json } }\nflow:\n  - { id: copy, from: reader, to: system::stdout }\n`;
    const run = await runEddy(['validate', '-'], { stdin: text, cwd: dir });
    expect(run.stderr).to.equal('');
    expect(run.stdout).to.equal('<stdin>: ok (1 onramp, 1 binding, 1 mapping)\n');
    expect(run.code).to.equal(0);
    const elsewhere = mkdtempSync(join(tmpdir(), 'eddy-validate-other-'));
    const missing = await runEddy(['validate', '-'], { stdin: text, cwd: elsewhere });
    expect(missing.stderr).to.equal(`error: <stdin>: onramp 'reader': config.source: cannot read '${join(elsewhere, 'in.json')}': no such file\n`);
    expect(missing.code).to.equal(1);
  });

  it("validates every config file of examples/ (from any working directory: their relative paths are their folder's)", async () => {
    const configs = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml') && !f.endsWith('.cases.yaml'));
    expect(configs).to.include.members(['default.yaml', 'kv.yaml', 'elastic.yaml']);
    for (const name of configs) {
      const file = join(EXAMPLES, name);
      const run = await eddy(['validate', file]);
      expect(run.err, name).to.equal('');
      expect(run.out, name).to.match(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ok \\(.*\\)\n$`));
      expect(run.code, name).to.equal(0);
    }
    // from another working directory, as a child process: kv.yaml reads kv-commands.jsonl beside it
    const elsewhere = mkdtempSync(join(tmpdir(), 'eddy-validate-cwd-'));
    const run = await runEddy(['validate', join(EXAMPLES, 'kv.yaml'), join(EXAMPLES, 'elastic.yaml')], { cwd: elsewhere });
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(0);
  });

  it('needs a file: exit 2 with the usage', async () => {
    const run = await eddy(['validate']);
    expect(run.code).to.equal(2);
    expect(run.err).to.match(/^error: name at least one config file \(- reads standard input\)\nusage: eddy validate /);
  });
});
