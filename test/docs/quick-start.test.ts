import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../helpers/runtime';
import { peer } from '../helpers/peers';

const ROOT = join(__dirname, '../../..');

/** The shell lines of the README's quick start block. */
function quickStartLines(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README.md: no sh block under "## Quick start"');
  return block[1].split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
}

function sh(line: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', line], { timeout: 20000 }, (err, stdout) => (err ? reject(new Error(`${line}: ${err.message}`)) : resolve(stdout))),
  );
}

describe("README's quick start", function () {
  this.timeout(60000);

  it('runs as written against `npm start`: the event sent with curl reaches standard output', async () => {
    peer('curl');
    const lines = quickStartLines();
    expect(lines).to.have.length(4);
    // what `npm start` runs once built: the default example with the API on 127.0.0.1:9898
    const child = spawn(process.execPath, [join(ROOT, 'scripts/start.js')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await eventually(async () => (await fetch('http://127.0.0.1:9898/version').catch(() => undefined))?.ok === true, 30000, `the API on 127.0.0.1:9898 (stderr: ${stderr})`);
      const answers: string[] = [];
      for (const line of lines) answers.push(await sh(line));
      expect(JSON.parse(answers[0])).to.include({ id: 'web', type: 'rest' });
      expect(JSON.parse(answers[2])).to.have.property('id', 'hello');
      expect(answers[3]).to.match(/^HTTP\/1\.1 202 Accepted/);
      await eventually(() => stdout.split('\n').includes('{"hello":"world"}'), 10000, 'the event on standard output');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
  });
});
