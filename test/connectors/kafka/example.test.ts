import { expect } from 'chai';
import { join } from 'node:path';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { runExample, type EddyProcess } from '../example-runner';

const EXAMPLE = join(__dirname, '../../../../examples/kafka.yaml');

describe('examples/kafka.yaml', function () {
  this.timeout(30000);
  let eddy: EddyProcess | undefined;
  before(async function () {
    const { host, port } = await requireService(this, 'kafka');
    // the example names the project's broker
    if (host !== '127.0.0.1' || port !== 9092) this.skip();
  });
  afterEach(async () => {
    await eddy?.stop();
    eddy = undefined;
  });

  it('runs: its ticks go through the topic and come back out of the consumer group to standard output', async () => {
    const started = BigInt(Date.now()) * 1_000_000n;
    eddy = runExample(EXAMPLE);
    // ticks of this run (an earlier run's may come first: the group resumes where it stopped)
    const ticks = () =>
      eddy!.events().filter((e) => {
        const tick = e as { onramp?: string; ingest_ns?: number };
        return tick.onramp === 'metronome' && BigInt(Math.round(tick.ingest_ns ?? 0)) >= started;
      });
    await eventually(() => ticks().length >= 2, 25000, 'two ticks through kafka').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n--- stdout ---\n${eddy!.stdout().slice(-2000)}\n--- stderr ---\n${eddy!.stderr().slice(-2000)}`);
    });
    expect(eddy.stderr()).to.match(/kafka onramp \/onramp\/consumer\/main: joined the group; assigned eddy-example \[0\]/);
    expect(await eddy.stop()).to.equal(0);
    eddy = undefined;
  });
});
