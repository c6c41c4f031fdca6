import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEddy } from '../../helpers/cli';

const linesOf = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1) : []);

/**
 * The stdin onramp in a real child process: input piped in and closed (end
 * of input), cut and decoded by preprocessors. The runtime keeps running
 * after the end of input (its API is up), so each test stops it with
 * SIGTERM once the output is complete, and checks it drained and exited 0.
 */
describe('stdin onramp in a child process', function () {
  this.timeout(30000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-stdin-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const config = (onramp: string, offramp: string) => `onramp:
${onramp}
offramp:
${offramp}
binding:
  - id: piped
    links:
      "/onramp/input/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/output/{instance}/in"]
mapping:
  /binding/piped/main: {}
`;

  it('lines then base64, json codec, into a file: every line decoded in order, the last one without a newline too; a line that is not JSON counted, not passed', async () => {
    const out = join(dir, 'out.json');
    const file = join(dir, 'eddy.yaml');
    writeFileSync(
      file,
      config(
        `  - id: input
    type: stdin
    codec: json
    preprocessors: [lines, base64]`,
        `  - id: output
    type: file
    config: { file: "${out}" }`,
      ),
    );
    const records = Array.from({ length: 50 }, (_, i) => ({ id: i + 1, text: `line ${i + 1} with ünïcödé` }));
    const encoded = records.map((r) => Buffer.from(JSON.stringify(r)).toString('base64'));
    // in the middle a line whose base64 decodes to no JSON (a codec error: that line alone goes to err);
    // no newline after the last line: the end of input flushes it
    const notJson = Buffer.from('{"id": oops').toString('base64');
    const input = [...encoded.slice(0, 25), notJson, ...encoded.slice(25)].join('\n');
    const run = await runEddy(['server', 'run', '-f', file, '--api-port', '0'], { stdin: input, signalWhen: () => linesOf(out).length >= records.length });
    expect(run.code, run.stderr).to.equal(0);
    expect(linesOf(out).map((l) => JSON.parse(l))).to.deep.equal(records);
    expect(run.stderr).to.match(/WARN {2}\[stdin \/onramp\/input\/main\] Onramp \/onramp\/input\/main: .*err port not connected; counted/);
  });

  it('lines, string codec, into a stdout offramp with a prefix: one event per line, a blank line an event too, ending at the end of input', async () => {
    const file = join(dir, 'eddy.yaml');
    writeFileSync(
      file,
      config(
        `  - id: input
    type: stdin
    preprocessors: [lines]`,
        `  - id: output
    type: stdout
    codec: string
    config: { prefix: ">> " }`,
      ),
    );
    const words = ['alpha', 'beta', '', 'gamma', 'δέλτα'];
    const printed = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('>> '));
    const run = await runEddy(['server', 'run', '-f', file, '--api-port', '0'], {
      stdin: `${words.join('\n')}\n`,
      signalWhen: ({ stdout }) => printed(stdout).length >= words.length,
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(printed(run.stdout)).to.deep.equal(words.map((w) => `>> ${w}`));
  });
});
