import { expect } from 'chai';
import { eventually } from '../../helpers/runtime';
import { exampleCopy } from '../../helpers/examples';
import { runExample, type EddyProcess } from '../example-runner';
import { logServer, type LogServer } from './helpers';

/**
 * examples/logvendor.yaml run as `eddy server run -f`, its endpoint's port
 * (a local collector's, fixed) swapped for a stand-in of the Log API on a
 * port of this run's own.
 */
describe('examples/logvendor.yaml', function () {
  this.timeout(30_000);
  let server: LogServer | undefined;
  let eddy: EddyProcess | undefined;
  afterEach(async () => {
    await eddy?.stop();
    await server?.close();
    eddy = server = undefined;
  });

  it('runs: ticks arrive as gzipped log entries with a message and a logtype, the key in X-License-Key', async () => {
    server = await logServer(undefined);
    eddy = runExample(exampleCopy('logvendor.yaml', { 8089: new URL(server.url).port }));
    await eventually(() => server!.entries().length >= 2, 20_000, `two log entries\n${eddy.stderr()}`);
    const [first] = server.entries() as { message: string; logtype: string; onramp: string }[];
    expect(first).to.include({ logtype: 'eddy-example', onramp: 'metronome' });
    expect(first.message).to.match(/^tick \d+$/);
    expect(server.requests[0].headers['content-encoding']).to.equal('gzip');
    expect(server.requests[0].headers['x-license-key']).to.equal('YOUR_LICENSE_KEY');
    expect(await eddy.stop()).to.equal(0);
    eddy = undefined;
  });
});
