import { expect } from 'chai';
import { join } from 'node:path';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { runExample, type EddyProcess } from '../example-runner';
import { TestClient } from './helpers';

const EXAMPLE = join(__dirname, '../../../../examples/amqp.yaml');

describe('examples/amqp.yaml (real RabbitMQ)', function () {
  this.timeout(40_000);
  let server: ServiceAddress;
  let eddy: EddyProcess | undefined;
  let client: TestClient | undefined;

  before(async function () {
    server = await requireService(this, 'rabbitmq');
  });
  afterEach(async () => {
    await eddy?.stop();
    eddy = undefined;
    await client?.close();
    client = undefined;
  });

  it('runs: ticks published by the amqp offramp come back through the amqp onramp, and so does a message another client publishes', async () => {
    eddy = runExample(EXAMPLE);
    interface Printed {
      onramp?: string;
      routing_key?: string;
      hello?: string;
    }
    const printed = () => eddy!.events() as Printed[];
    await eventually(
      () => printed().some((e) => e.onramp === 'metronome' && e.routing_key === 'eddy.example.tick'),
      20_000,
      `a tick through RabbitMQ\n${eddy.stderr()}`,
    );
    client = await TestClient.open(server);
    await client.publish('amq.topic', 'eddy.example.hello', ['{"hello":"amqp"}']);
    await eventually(() => printed().some((e) => e.hello === 'amqp' && e.routing_key === 'eddy.example.hello'), 20_000, 'the other client’s message');
    expect(await eddy.stop()).to.equal(0);
    eddy = undefined;
    // the exclusive queue went with eddy's connection
    await eventually(async () => !(await client!.exists('eddy-example')), 20_000, 'the exclusive queue deleted');
  });
});
