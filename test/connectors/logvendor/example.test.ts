import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../helpers/runtime';
import { runExample, type EddyProcess } from '../example-runner';
import { logServer, type LogServer } from './helpers';

const EXAMPLE = join(__dirname, '../../../../examples/logvendor.yaml');
const EXAMPLE_ENDPOINT = 'http://127.0.0.1:8089/log/v1';

/**
 * examples/logvendor.yaml run as `eddy server run -f`, its endpoint (a
 * local collector on a fixed port) swapped for a stand-in of the Log API on
 * a port of this run's own.
 */
describe('examples/logvendor.yaml', function () {
  this.timeout(30_000);
  let server: LogServer | undefined;
  let eddy: EddyProcess | undefined;
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-logvendor-example-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await eddy?.stop();
    await server?.close();
    eddy = server = undefined;
  });

  it('runs: ticks arrive as gzipped log entries with a message and a logtype, the key in X-License-Key', async () => {
    server = await logServer(undefined);
    const text = readFileSync(EXAMPLE, 'utf8');
    expect(text).to.contain(EXAMPLE_ENDPOINT);
    const file = join(dir, 'logvendor.yaml');
    writeFileSync(file, text.replace(EXAMPLE_ENDPOINT, server.url));
    eddy = runExample(file);
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
