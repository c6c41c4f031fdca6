/**
 * `eddy server run --data-dir DIR` in a child process: deactivations and
 * deletions made over REST stay made after a restart.
 */
import { expect } from 'chai';
import { call } from '../helpers/runtime';
import { created, freshDataDir, setUp, startServer } from './persistence-server';

describe('persistence: eddy server run --data-dir, changes kept', function () {
  this.timeout(30000);
  const dataDir = freshDataDir();

  it('keeps deactivations and deletions', async () => {
    const first = await startServer(['--data-dir', dataDir()]);
    await setUp(first);
    await created(first.base, '/binding/flow/other');
    expect((await call(first.base, 'DELETE', '/binding/flow/main')).status).to.equal(200);
    expect((await call(first.base, 'DELETE', '/pipeline/spare')).status).to.equal(200);
    expect(await first.stop('SIGKILL')).to.equal(null);

    const second = await startServer(['--data-dir', dataDir()]);
    expect((await call(second.base, 'GET', '/binding/flow')).body).to.deep.include({ instances: ['other'] });
    expect((await call(second.base, 'GET', '/pipeline')).body).to.not.include('spare');
    expect((await call(second.base, 'GET', '/pipeline/spare')).status).to.equal(404);
    // once the last instance is gone, the artefacts can go too, and stay gone
    expect((await call(second.base, 'DELETE', '/binding/flow/other')).status).to.equal(200);
    expect((await call(second.base, 'DELETE', '/binding/flow')).status).to.equal(200);
    expect(await second.stop('SIGTERM')).to.equal(0);

    const third = await startServer(['--data-dir', dataDir()]);
    expect((await call(third.base, 'GET', '/binding')).body).to.deep.equal([]);
    expect((await call(third.base, 'GET', '/onramp/tick')).body).to.deep.include({ instances: [] });
  });
});
