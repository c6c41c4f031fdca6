import { expect } from 'chai';
import { connect } from 'node:net';
import { eventually } from '../../helpers/runtime';
import { exampleCopy } from '../../helpers/examples';
import { runExample, type EddyProcess } from '../example-runner';
import { freePort } from '../net-helpers';

describe('examples/tcp.yaml', () => {
  let eddy: EddyProcess | undefined;
  afterEach(async () => {
    await eddy?.stop();
    eddy = undefined;
  });

  it('runs: the ticks it sends through the tcp offramp and lines from another client both arrive at the tcp onramp', async () => {
    // the example's 14242 (the onramp's port and the offramp's target alike) becomes a free port
    const port = await freePort('tcp');
    eddy = runExample(exampleCopy('tcp.yaml', { 14242: port }));
    const ticks = () => eddy!.events().filter((e) => (e as { onramp?: string }).onramp === 'metronome');
    await eventually(() => ticks().length >= 1, 10000, 'a tick through tcp');
    // the listener is up: another client's lines are framed on their own connection
    const client = connect(port, '127.0.0.1');
    client.end('{"hello":"tcp"}\n{"second":');
    client.on('error', () => undefined);
    await eventually(
      () => eddy!.events().some((e) => (e as { hello?: string }).hello === 'tcp') && ticks().length >= 2,
      10000,
      'the client line and a second tick',
    );
    expect(await eddy.stop()).to.equal(0);
    // the client's cut last line went to the err port (not linked in the example: counted and logged)
    expect(eddy.stderr()).to.match(/Onramp \/onramp\/listener\/main: .*JSON/);
    eddy = undefined;
  });
});
