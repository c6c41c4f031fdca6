import { expect } from 'chai';
import { join } from 'node:path';
import { runEddy } from '../../helpers/cli';

describe('examples/kv.yaml', () => {
  it('runs from the repository root: every command answered on stdout in order, the invalid one on stderr', async () => {
    // mocha runs from the repository root, which the example's relative source path needs
    const root = join(__dirname, '../../../..');
    expect(process.cwd()).to.equal(root);
    const run = await runEddy(['server', 'run', '-f', join(root, 'examples/kv.yaml'), '--no-api']);
    expect(run.code, run.stderr).to.equal(0);
    const replies = run.stdout
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l));
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    expect(replies.map((r) => r.correlation)).to.deep.equal(['1', '2', '3', '4', '5', '6', '7', '9', '10']);
    // 1 and 6 answer what an earlier run may have left; the rest does not depend on it
    expect(replies.slice(1, 5)).to.deep.equal([
      { ok: 'badger', correlation: '2', op: 'get' },
      { ok: 'badger', correlation: '3', op: 'put' },
      { error: { current: { legs: 4 }, proposed: 'ferret' }, correlation: '4', op: 'cas' },
      { ok: null, correlation: '5', op: 'cas' },
    ]);
    expect(replies.slice(6)).to.deep.equal([
      {
        ok: [
          { key: b64('snot'), value: 'ferret' },
          { key: b64('stoat'), value: [1, 2, 3] },
        ],
        correlation: '7',
        op: 'scan',
      },
      { ok: 'ferret', correlation: '9', op: 'delete' },
      { ok: [1, 2, 3], correlation: '10', op: 'delete' },
    ]);
    expect(run.stderr).to.include(
      `{"key":null,"error":"Invalid KV command: unknown command 'frobnicate' (commands: get, put, delete, scan, cas)","correlation":"8"}`,
    );
  });
});
