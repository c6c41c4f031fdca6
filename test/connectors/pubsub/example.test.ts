import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { runExample, type EddyProcess } from '../example-runner';
import { PROJECT, TestClient, useEmulator } from './helpers';

const EXAMPLE = join(__dirname, '../../../../examples/pubsub.yaml');
const EXAMPLE_SUBSCRIPTION = 'projects/eddy-example/subscriptions/eddy-example';

/**
 * examples/pubsub.yaml run as `eddy server run -f`, against the Pub/Sub
 * fake. The fake starts with the example's own subscription (so the file as
 * written activates: test/examples checks that); this test runs the file
 * with that one name swapped for a subscription of its own, so no other
 * run on the machine can take its messages.
 */
describe('examples/pubsub.yaml (Pub/Sub fake pstest)', function () {
  this.timeout(40_000);
  let client: TestClient;
  let eddy: EddyProcess | undefined;
  let dir: string;

  before(async function () {
    useEmulator(await requireService(this, 'pubsub'));
    dir = mkdtempSync(join(tmpdir(), 'eddy-pubsub-example-'));
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    client = new TestClient();
  });
  afterEach(async () => {
    await eddy?.stop();
    eddy = undefined;
    await client.close();
  });

  it('runs: each published message is printed with its message id and attributes, and acked', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    const text = readFileSync(EXAMPLE, 'utf8');
    expect(text).to.contain(EXAMPLE_SUBSCRIPTION);
    const file = join(dir, 'pubsub.yaml');
    writeFileSync(file, text.replace(EXAMPLE_SUBSCRIPTION, `projects/${PROJECT}/subscriptions/${subscription}`));
    eddy = runExample(file);
    const ids = await client.publish(topic, ['{"hello":"pubsub","n":1}', '{"hello":"pubsub","n":2}'], { source: 'example-test' });
    interface Printed {
      hello?: string;
      n?: number;
      message_id?: string;
      attributes?: Record<string, string>;
    }
    const printed = () => (eddy!.events() as Printed[]).filter((e) => e.hello === 'pubsub');
    await eventually(() => printed().length === 2, 30_000, `two messages printed\n${eddy.stderr()}`);
    expect(printed().map((e) => e.message_id)).to.have.members(ids);
    expect(printed().every((e) => e.attributes?.source === 'example-test')).to.equal(true);
    expect(await eddy.stop()).to.equal(0);
    eddy = undefined;
    expect(await client.pending(subscription)).to.deep.equal([]);
  });
});
