import { expect } from 'chai';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { amqpAddr, relay, TestClient, unique, type Relay } from './helpers';

/**
 * Published and activated over the REST API: RabbitMQ → amqp onramp →
 * pipeline → amqp offramp → RabbitMQ, and the 400s an activation answers
 * when the queue cannot be bound or the server cannot be reached.
 */
describe('amqp end to end over REST (real RabbitMQ)', function () {
  this.timeout(40_000);
  let server: ServiceAddress;
  let client: TestClient;
  let rt: Started;
  let proxy: Relay | undefined;

  before(async function () {
    server = await requireService(this, 'rabbitmq');
  });
  beforeEach(async () => {
    client = await TestClient.open(server);
    rt = await startRuntime();
  });
  afterEach(async () => {
    await rt.stop();
    await proxy?.close();
    proxy = undefined;
    await client.close();
  });

  async function publish(kind: string, body: unknown): Promise<void> {
    const reply = await call(rt.base, 'POST', `/${kind}`, { body });
    expect(reply.status, `${kind}: ${reply.text}`).to.equal(201);
  }

  it('amqp onramp -> runtime::cel (routing key from the data, headers kept) -> amqp offramp: every message arrives, and the source queue is left empty', async () => {
    const run = unique('run');
    const input = client.track(unique('in'));
    const [red, blue] = [await client.queue(unique('red'), { durable: false }), await client.queue(unique('blue'), { durable: false })];
    await client.bind(red, 'amq.topic', `${run}.out.red`);
    await client.bind(blue, 'amq.topic', `${run}.out.blue`);

    await publish('onramp', {
      id: 'rabbit_in',
      type: 'amqp',
      config: { amqp_addr: amqpAddr(server), exchange: 'amq.topic', routing_key: `${run}.in.#`, queue_name: input, queue_options: {} },
    });
    await publish('pipeline', {
      id: 'route',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'key', type: 'runtime::cel', config: { meta: { amqp: `{"routing_key": "${run}.out." + event.colour, "headers": meta.amqp.headers}` } } }],
      links: { in: ['key'], key: ['out'] },
    });
    await publish('offramp', { id: 'rabbit_out', type: 'amqp', config: { amqp_addr: amqpAddr(server), exchange: 'amq.topic' } });
    await publish('binding', {
      id: 'relay',
      links: {
        '/onramp/rabbit_in/{instance}/out': ['/pipeline/route/{instance}/in'],
        '/pipeline/route/{instance}/out': ['/offramp/rabbit_out/{instance}/in'],
      },
    });
    expect((await call(rt.base, 'POST', '/binding/relay/main')).status).to.equal(201);

    const messages = Array.from({ length: 20 }, (_, n) => JSON.stringify({ n, colour: n % 2 === 0 ? 'red' : 'blue' }));
    await client.publish('amq.topic', `${run}.in.paint`, messages, { headers: { batch: 'b1' } });
    const reds = await client.take(red, 10);
    const blues = await client.take(blue, 10);
    expect(reds.map((m) => JSON.parse(m.body).n)).to.have.members([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    expect(blues.map((m) => JSON.parse(m.body).n)).to.have.members([1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
    expect([...reds, ...blues].every((m) => m.headers.batch === 'b1' && m.persistent)).to.equal(true);
    // the onramp acked each message once its copy was confirmed: nothing waits, nothing is unacked
    await eventually(async () => (await client.depth(input)).messageCount === 0, 30_000, 'an empty input queue');
    expect((await call(rt.base, 'DELETE', '/binding/relay/main')).status).to.equal(200);
    expect((await client.depth(input)).messageCount, 'messages returned unacked on deactivation').to.equal(0);
  });

  async function activationFails(onramp: Record<string, unknown>, offramp: Record<string, unknown>): Promise<string> {
    await publish('onramp', { id: 'rabbit_in', type: 'amqp', config: onramp });
    await publish('offramp', { id: 'rabbit_out', type: 'amqp', config: offramp });
    await publish('binding', {
      id: 'relay',
      links: {
        '/onramp/rabbit_in/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
        '/pipeline/system::passthrough/{instance}/out': ['/offramp/rabbit_out/{instance}/in'],
      },
    });
    const reply = await call(rt.base, 'POST', '/binding/relay/main');
    expect(reply.status, reply.text).to.equal(400);
    expect((await call(rt.base, 'GET', '/version')).status).to.equal(200);
    return (reply.body as { error: string }).error;
  }

  it('answers 400 naming the onramp when its queue cannot be bound (no such exchange)', async () => {
    const exchange = unique('no-such-exchange');
    const error = await activationFails(
      { amqp_addr: amqpAddr(server), exchange, routing_key: 'k', queue_name: client.track(unique('in')), queue_options: {} },
      { amqp_addr: amqpAddr(server), routing_key: 'nowhere' },
    );
    expect(error).to.include("onramp 'rabbit_in' (amqp) cannot start");
    expect(error).to.include(`no exchange '${exchange}'`);
  });

  it('answers 400 naming the offramp when the server cannot be reached', async () => {
    proxy = await relay(server);
    proxy.refuse();
    const queue = await client.queue(unique('in'), { durable: false });
    const error = await activationFails(
      { amqp_addr: amqpAddr(server), queue_name: queue, queue_options: { passive: true } },
      { amqp_addr: `amqp://guest:guest@127.0.0.1:${proxy.port}/%2f` },
    );
    expect(error).to.match(
      new RegExp(`offramp 'rabbit_out' \\(amqp\\) cannot start: cannot connect to amqp://guest:\\*\\*\\*@127\\.0\\.0\\.1:${proxy.port}/%2f`),
    );
    // the onramp that had opened is released with the failed activation: no consumer is left on its queue
    expect(await client.consumers(queue, 0)).to.equal(true);
  });
});
