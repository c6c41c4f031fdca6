import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { workerExecArgv, YOUNG_GENERATION_ARG } from '../../src/workers/pool';

describe("workers: the young generation's limit (Node 24+ memory, bench/README.md)", () => {
  it('a worker gets the limit beside the Node flags of the primary', () => {
    expect(workerExecArgv([], '')).to.deep.equal([YOUNG_GENERATION_ARG]);
    expect(workerExecArgv(['--enable-source-maps'], '--no-warnings')).to.deep.equal(['--enable-source-maps', YOUNG_GENERATION_ARG]);
  });

  it("a limit the user set, as a flag or in NODE_OPTIONS, is the user's", () => {
    expect(workerExecArgv(['--max-semi-space-size=64'], '')).to.deep.equal(['--max-semi-space-size=64']);
    expect(workerExecArgv([], '--max-semi-space-size=8 --no-warnings')).to.deep.equal([]);
  });

  it('npm start runs eddy with the same limit', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { scripts: { start: string } };
    expect(pkg.scripts.start).to.equal(`node ${YOUNG_GENERATION_ARG} scripts/start.js`);
  });
});
