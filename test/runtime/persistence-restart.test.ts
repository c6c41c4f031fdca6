/**
 * `eddy server run --data-dir DIR` in a child process: what was published and
 * activated over REST is back after a restart, whether the first process
 * ended with SIGTERM or was killed with SIGKILL right after its last 201.
 */
import { expect } from 'chai';
import { call, eventually } from '../helpers/runtime';
import { FLOW, created, freshDataDir, setUp, startServer, type ServerChild } from './persistence-server';

/** Everything setUp made is there, and ticks reach the new process's stdout. */
async function expectBack(server: ServerChild, instances: string[]): Promise<void> {
  expect((await call(server.base, 'GET', '/onramp')).body).to.deep.equal(['tick']);
  expect((await call(server.base, 'GET', '/offramp')).body).to.have.members(['system::stdout', 'system::stderr', 'out']);
  expect((await call(server.base, 'GET', '/pipeline')).body).to.have.members(['system::passthrough', 'system::metrics', 'spare']);
  expect((await call(server.base, 'GET', '/binding/flow')).body).to.deep.equal({ artefact: FLOW, instances });
  expect((await call(server.base, 'GET', '/onramp/tick')).body).to.deep.include({ instances });
  await eventually(() => server.out.stdout.includes('"onramp":"metronome"'), 5000, 'ticks on the restarted process');
}

describe('persistence: eddy server run --data-dir, restarted', function () {
  this.timeout(30000);
  const dataDir = freshDataDir();

  it('comes back with the same artefacts and instances after SIGTERM, and again after kill -9 right after a 201', async () => {
    const first = await startServer(['--data-dir', dataDir()]);
    await setUp(first);
    await eventually(() => first.out.stdout.includes('"onramp":"metronome"'), 5000, 'ticks before the restart');
    expect(await first.stop('SIGTERM')).to.equal(0);

    const second = await startServer(['--data-dir', dataDir()]);
    await expectBack(second, ['main']);
    await created(second.base, '/binding/flow/other');
    expect(await second.stop('SIGKILL')).to.equal(null);

    await expectBack(await startServer(['--data-dir', dataDir()]), ['main', 'other']);
  });
});
