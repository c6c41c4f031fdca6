import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EDDY } from '../helpers/cli';
import { docBlock } from '../helpers/readme';
import { eventually } from '../helpers/runtime';

/** A metronome into a file offramp writing `out`: the file a reload changes. */
const flows = (out: string) => `onramp:
  - id: ticks
    type: metronome
    config: { interval: 20 }
offramp:
  - id: out
    type: file
    config: { file: "${out}" }
binding:
  - id: f
    links:
      "/onramp/ticks/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]
      "/pipeline/system::passthrough/{instance}/out": ["/offramp/out/{instance}/in"]
mapping:
  /binding/f/main: {}
`;

describe('eddy server run: reloading the config files (docs/config-files.md, Reloading)', function () {
  this.timeout(60000);
  let dir: string;
  let child: ChildProcess | undefined;
  let stderr = '';
  const lines = (name: string) =>
    existsSync(join(dir, name))
      ? readFileSync(join(dir, name), 'utf8')
          .split('\n')
          .filter((l) => l !== '').length
      : 0;

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-reload-cli-'))));
  afterEach(() => {
    child?.kill('SIGKILL');
    child = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  function start(args: string[]): void {
    stderr = '';
    child = spawn(process.execPath, [EDDY, ...args], { cwd: dir, env: { ...process.env, EDDY_LOG: 'info' }, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  }

  it('with --watch, as the page shows it, applies an edit of the file', async () => {
    const command = docBlock('docs/config-files.md', '## Reloading', 'sh').trim();
    expect(command).to.equal('eddy server run -f flows.yaml --watch');
    writeFileSync(join(dir, 'flows.yaml'), flows(join(dir, 'a.json')));
    start([...command.split(' ').slice(1), '--no-api']);
    await eventually(() => lines('a.json') >= 3, 20000, 'the flow to write a.json');
    writeFileSync(join(dir, 'flows.yaml'), flows(join(dir, 'b.json')));
    await eventually(() => lines('b.json') >= 3, 20000, 'the reloaded flow to write b.json');
    // the log line follows the activation
    await eventually(
      () => /reloaded .*flows\.yaml: 2 unchanged, 1 artefacts replaced or removed, 1 published, 1 mappings stopped, 1 activated/.test(stderr),
      20000,
      'the reload in the log',
    );
    // a broken edit changes nothing, and says why
    writeFileSync(join(dir, 'flows.yaml'), flows(join(dir, 'c.json')).replace('interval: 20', 'interval: -1'));
    await eventually(() => stderr.includes('reload refused, nothing changed:'), 20000, 'the refusal in the log');
    expect(stderr).to.match(/reload refused, nothing changed: .*flows\.yaml: onramp 'ticks': .*interval/);
    const before = lines('b.json');
    await eventually(() => lines('b.json') > before, 20000, 'the flow to run on as it was');
    expect(lines('c.json')).to.equal(0);
  });

  it('without --watch, reloads on SIGHUP only', async () => {
    writeFileSync(join(dir, 'flows.yaml'), flows(join(dir, 'a.json')));
    start(['server', 'run', '-f', 'flows.yaml', '--no-api']);
    await eventually(() => lines('a.json') >= 3, 20000, 'the flow to write a.json');
    writeFileSync(join(dir, 'flows.yaml'), flows(join(dir, 'b.json')));
    child!.kill('SIGHUP');
    await eventually(() => lines('b.json') >= 3, 20000, 'the flow reloaded by SIGHUP to write b.json');
    expect(child!.exitCode).to.equal(null);
  });
});
