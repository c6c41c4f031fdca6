import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EDDY } from '../../helpers/cli';

/**
 * `eddy server run -f flow.yaml | head -1`: once the reader of stdout is
 * gone, writing gets EPIPE. The stdout offramp fails the events it is sent
 * from then on and says so once; the runtime keeps running.
 */
describe('stdout offramp: a reader that goes away (EPIPE)', function () {
  this.timeout(20000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-epipe-'));
    writeFileSync(
      join(dir, 'flow.yaml'),
      [
        'onramp:',
        '  - { id: tick, type: metronome, config: { interval: 5 } }',
        'binding:',
        '  - id: flow',
        '    links:',
        '      "/onramp/tick/{instance}/out": ["/pipeline/system::passthrough/{instance}/in"]',
        '      "/pipeline/system::passthrough/{instance}/out": ["/offramp/system::stdout/system/in"]',
        'mapping:',
        '  /binding/flow/main: { instance: main }',
      ].join('\n'),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('logs it once, keeps running and exits cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', join(dir, 'flow.yaml'), '--no-api'], {
      stdio: 'pipe',
      env: { ...process.env, EDDY_LOG: 'warn' },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const killer = setTimeout(() => child.kill('SIGKILL'), 15000);
    try {
      // the first event line arrives, then the reader goes away, as `head -1` does
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      child.stdout.destroy();
      // the next writes fail with EPIPE: a warning, not a crash
      await new Promise<void>((resolve, reject) => {
        const check = () => (/stdout: cannot write any more \(.*EPIPE/.test(stderr) ? resolve() : undefined);
        child.stderr.on('data', check);
        child.once('close', (code, sig) => reject(new Error(`eddy exited (${code} ${sig}) before warning; stderr:\n${stderr}`)));
        check();
      });
      expect(child.exitCode).to.equal(null); // still running
      child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      expect(stderr.match(/cannot write any more/g)).to.have.length(1);
      expect(stderr).to.not.match(/Unhandled 'error' event/);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });
});
