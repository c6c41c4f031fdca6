import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { gzipSync } from 'node:zlib';
import { eventually } from '../../helpers/runtime';
import { exampleCopy } from '../../helpers/examples';
import { runExample, type EddyProcess } from '../example-runner';
import { freePort } from '../net-helpers';

describe('examples/udp.yaml', () => {
  let eddy: EddyProcess | undefined;
  afterEach(async () => {
    await eddy?.stop();
    eddy = undefined;
  });

  it('runs: its own chunked, gzip-compressed ticks and a GELF message from another sender are printed', async () => {
    // the example's 12201 (the onramp's port and the offramp's destination alike) becomes a free port
    const port = await freePort('udp');
    eddy = runExample(exampleCopy('udp.yaml', { 12201: port }));
    const ticks = () => eddy!.events().filter((e) => (e as { onramp?: string }).onramp === 'metronome');
    await eventually(() => ticks().length >= 1, 10000, 'a tick through udp');
    const sender = createSocket('udp4');
    const gelf = { version: '1.1', host: 'test', short_message: 'hello gelf', level: 5 };
    await new Promise<void>((r) => sender.send(gzipSync(Buffer.from(JSON.stringify(gelf))), port, '127.0.0.1', () => r()));
    sender.close();
    await eventually(
      () => eddy!.events().some((e) => (e as { short_message?: string }).short_message === 'hello gelf') && ticks().length >= 2,
      10000,
      'the GELF message and a second tick',
    );
    expect(eddy.events()).to.deep.include(gelf);
    expect(await eddy.stop()).to.equal(0);
    eddy = undefined;
  });
});
