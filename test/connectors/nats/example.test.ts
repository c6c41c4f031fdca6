import { expect } from 'chai';
import { join } from 'node:path';
import { eventually } from '../../helpers/runtime';
import { requireService, serviceAddress } from '../../helpers/services';
import { runExample, type EddyProcess } from '../example-runner';
import { client } from './helpers';

const EXAMPLE = join(__dirname, '../../../../examples/nats.yaml');

describe('examples/nats.yaml', function () {
  this.timeout(30000);
  let run: EddyProcess | undefined;

  before(async function () {
    await requireService(this, 'nats');
    // the example names the default address
    if (serviceAddress('nats').port !== 4222) this.skip();
  });
  afterEach(async () => {
    await run?.stop();
    run = undefined;
  });

  it('publishes metronome ticks to NATS and prints what its subscription receives, also a message published by hand', async () => {
    run = runExample(EXAMPLE);
    const ticks = () => run!.events().filter((e) => (e as { onramp?: string }).onramp === 'metronome');
    await eventually(() => ticks().length >= 2, 20000, 'two ticks printed after their trip through NATS');
    const nc = await client();
    try {
      // until one arrives: the subscription is up, but a publish racing it may find no subscriber
      await eventually(
        async () => {
          nc.publish('eddy.example.ticks', JSON.stringify({ hello: 'world' }));
          await nc.flush();
          await new Promise((r) => setTimeout(r, 100));
          return run!.events().some((e) => (e as { hello?: string }).hello === 'world');
        },
        10000,
        'the message published by hand',
      );
    } finally {
      await nc.close();
    }
    expect(ticks()[0]).to.have.keys('onramp', 'ingest_ns', 'id');
    const code = await run.stop();
    run = undefined;
    expect(code).to.equal(0);
  });
});
