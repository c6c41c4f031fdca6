import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEddy } from '../helpers/cli';

/** `eddy server run --log-format json` and EDDY_LOG per module, as a user runs them. */
describe('eddy server run: --log-format and EDDY_LOG', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-log-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const flow = () => {
    writeFileSync(join(dir, 'in.json'), '{"a":1}\n');
    const file = join(dir, 'flow.yaml');
    writeFileSync(
      file,
      // the tcp onramp logs where it listens (module tcp); the file onramp stops eddy once its file is read (the runtime logs that)
      `onramp:
  - { id: in, type: file, config: { source: "${join(dir, 'in.json')}", close_on_done: true } }
  - { id: net, type: tcp, config: { host: 127.0.0.1, port: 0 } }
offramp:
  - { id: out, type: file, config: { file: "${join(dir, 'out.json')}" } }
flow:
  - { id: copy, from: [in, net], to: out }
`,
    );
    return file;
  };

  it("json: every log line is an object with time, level and msg; a ramp's lines name its module and instance", async () => {
    const run = await runEddy(['server', 'run', '--no-api', '--log-format', 'json', '-f', flow()], { env: { EDDY_LOG: 'debug' } });
    expect(run.code, run.stderr).to.equal(0);
    const lines = run.stderr.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).to.be.above(0);
    const parsed = lines.map((l) => JSON.parse(l) as { time: string; level: string; msg: string; module?: string; instance?: string });
    for (const p of parsed) {
      expect(p.time).to.match(/^\d{4}-\d\d-\d\dT/);
      expect(['debug', 'info', 'warn', 'error']).to.include(p.level);
      expect(p.msg).to.be.a('string');
    }
    expect(
      parsed.some((p) => p.module === 'tcp' && p.instance === '/onramp/net/main' && p.msg.includes('listening')),
      JSON.stringify(parsed),
    ).to.equal(true);
    expect(
      parsed.some((p) => p.msg.startsWith('Exit requested')),
      JSON.stringify(parsed),
    ).to.equal(true);
  });

  it('EDDY_LOG=tcp=debug,error: the tcp ramps at debug, everything else at error', async () => {
    const run = await runEddy(['server', 'run', '--no-api', '-f', flow()], { env: { EDDY_LOG: 'tcp=debug,error' } });
    expect(run.code, run.stderr).to.equal(0);
    const logLines = run.stderr.split('\n').filter((l) => /^\d{4}-/.test(l));
    expect(
      logLines.some((l) => / INFO {2}\[tcp \/onramp\/net\/main\] .*listening/.test(l)),
      run.stderr,
    ).to.equal(true);
    for (const line of logLines) expect(line, 'only tcp lines, and errors').to.match(/ (ERROR|\w+ +\[tcp \/onramp\/net\/main\])/);
    expect(run.stderr, "the runtime's info line is below error").not.to.contain('Exit requested');
  });

  it('refuses a format or an EDDY_LOG it cannot read, naming it (exit 2)', async () => {
    const bad = await runEddy(['server', 'run', '--no-api', '--log-format', 'xml']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain("--log-format: text or json, not 'xml'");
    const level = await runEddy(['server', 'run', '--no-api'], { env: { EDDY_LOG: 'kafka=loud' } });
    expect(level.code).to.equal(2);
    expect(level.stderr).to.contain("EDDY_LOG: unknown level 'loud'");
  });
});
