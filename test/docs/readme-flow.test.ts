import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEddy } from '../helpers/cli';
import { docBlock } from '../helpers/readme';

/** README.md's "A flow in a file": its config, in 12 lines, run by its own command in a directory of its own. */
describe('README.md: a flow in a file', function () {
  this.timeout(30_000);
  const SECTION = '## A flow in a file';
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-readme-flow-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('counts the events per app in 5 s windows, each line naming its window, as the command runs it', async () => {
    const config = docBlock('README.md', SECTION, 'yaml');
    expect(config.trim().split('\n'), 'a flow in at most 15 lines').to.have.length.at.most(15);
    writeFileSync(join(dir, 'counts.yaml'), config);
    const events = [
      { app: 'web', ts: 1000 },
      { app: 'db', ts: 2000 },
      { app: 'web', ts: 3000 },
      { app: 'web', ts: 6000 },
    ];
    writeFileSync(join(dir, 'app.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const args = docBlock('README.md', SECTION, 'sh').trim().split(/\s+/);
    expect(args.slice(0, 2)).to.deep.equal(['npx', 'eddy']);
    const run = await runEddy(args.slice(2), { cwd: dir, timeoutMs: 20_000 });
    expect(run.code, run.stderr).to.equal(0);
    const lines = readFileSync(join(dir, 'counts.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    expect(lines.map((l) => JSON.parse(l) as unknown)).to.deep.equal([
      { app: 'web', start: 0, n: 2 },
      { app: 'db', start: 0, n: 1 },
      { app: 'web', start: 5000, n: 1 },
    ]);
  });
});
