import { expect } from 'chai';
import { join } from 'node:path';
import { FirstEventProbe } from '../helpers/first-event';

/**
 * `eddy server run` binds the API's port at start but loads express on the
 * first request (src/api/listen.ts): the flows of `-f` files do not wait
 * for it. (Requests through a CLI-started server, which build the app on
 * first use, are what test/cli/server-run.test.ts and the end-to-end tests
 * make.)
 */
describe('eddy server run: the API loads express on its first request', () => {
  const CLI = join(__dirname, '../../src/cli');
  let probe: FirstEventProbe;
  before(() => (probe = new FirstEventProbe()));
  after(() => probe.remove());

  it('at the first event of a -f flow, with the API on, no module of express is loaded', async () => {
    const argv = ['server', 'run', '-f', probe.config, '--api-port', '0'];
    const files = await probe.modulesAtFirstEvent(['-e', `require(${JSON.stringify(CLI)}).main(${JSON.stringify(argv)})`]);
    expect(
      files.some((f) => f.endsWith('/dist/src/api/listen.js')),
      'the API is up',
    ).to.equal(true);
    expect(files.filter((f) => f.includes('/node_modules/express/'))).to.deep.equal([]);
  });
});
