import { expect } from 'chai';
import { amqpOfframp, type AmqpOfframpConfig } from '../../../src/connectors/amqp/offramp';
import type { Sink } from '../../../src/connectors/connector';
import type { EddyEvent, Meta } from '../../../src/core/event';
import { probeOnramp, registriesWith, startFlow, type Flow, type ProbeLog } from '../../integration/delivery/helpers';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { fakeOfframpContext, type OfframpLog } from '../net-helpers';
import { amqpAddr, relay, TestClient, unique, type Relay } from './helpers';

/**
 * The amqp offramp against the real RabbitMQ: publisher confirms turn into
 * acks and fails, meta picks the routing key and headers, a missing exchange
 * or server fails the activation, and a lost connection triggers the
 * circuit breaker until it is back.
 */
describe('amqp offramp (real RabbitMQ)', function () {
  this.timeout(40_000);
  let server: ServiceAddress;
  let client: TestClient;
  let sink: Sink | undefined;
  let proxy: Relay | undefined;
  let flow: Flow | undefined;

  before(async function () {
    server = await requireService(this, 'rabbitmq');
  });
  beforeEach(async () => {
    client = await TestClient.open(server);
  });
  afterEach(async () => {
    await sink?.close?.();
    sink = undefined;
    await flow?.stop();
    flow = undefined;
    await proxy?.close();
    proxy = undefined;
    await client.close();
  });

  let seq = 0;
  const event = (data: unknown, meta: Meta = {}): EddyEvent => ({
    id: { uid: 1, seq: ++seq },
    data,
    meta,
    ingestNs: 0n,
    originUri: 'svc-test://here',
    isBatch: false,
    transactional: true,
  });
  const payload = (data: unknown) => Buffer.from(JSON.stringify(data));

  async function open(config: Partial<AmqpOfframpConfig>): Promise<{ sink: Sink; log: OfframpLog }> {
    const { ctx, log } = fakeOfframpContext();
    const full: AmqpOfframpConfig = { amqp_addr: amqpAddr(server), exchange: '', routing_key: '', persistent: true, ...config };
    sink = await amqpOfframp.create(full, ctx);
    return { sink, log };
  }

  it('publishes each payload with the routing key, persistent, and acks (with meta time) once the broker confirmed them all', async () => {
    const key = unique('key');
    const queue = await client.queue(unique('out'), { durable: false });
    await client.bind(queue, 'amq.topic', key);
    const { sink, log } = await open({ exchange: 'amq.topic', routing_key: key });
    await sink.send([payload({ n: 1 })], event({ n: 1 }));
    const batch = event([{ n: 2 }, { n: 3 }]);
    await sink.send([payload({ n: 2 }), payload({ n: 3 })], batch);
    expect(log.acks).to.have.length(2);
    expect(log.acks[1].event).to.equal(batch);
    expect(log.acks[1].meta?.time).to.be.a('number');
    const got = await client.take(queue, 3);
    expect(got.map((m) => m.body)).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(got.every((m) => m.persistent && m.exchange === 'amq.topic' && m.routingKey === key)).to.equal(true);
  });

  it('takes the routing key from meta amqp.routing_key and the headers from meta amqp.headers', async () => {
    const [configured, chosen] = [unique('key'), unique('key')];
    const queue = await client.queue(unique('out'), { durable: false });
    await client.bind(queue, 'amq.topic', chosen);
    const { sink } = await open({ exchange: 'amq.topic', routing_key: configured, persistent: false });
    await sink.send([payload({ n: 1 })], event({ n: 1 }, { amqp: { routing_key: chosen, headers: { tenant: 'b', attempt: 2 } } }));
    const [got] = await client.take(queue, 1);
    expect(got).to.include({ body: '{"n":1}', routingKey: chosen, persistent: false });
    expect(got.headers).to.deep.equal({ tenant: 'b', attempt: 2 });
  });

  it('fails a send the broker refuses (a nack: a full queue that rejects publishes)', async () => {
    const queue = await client.queue(unique('full'), { durable: false, maxLength: 1, arguments: { 'x-overflow': 'reject-publish' } });
    const { sink, log } = await open({ routing_key: queue });
    await sink.send([payload({ n: 1 })], event({ n: 1 }));
    let refused: Error | undefined;
    await Promise.resolve(sink.send([payload({ n: 2 })], event({ n: 2 }))).catch((err: unknown) => (refused = err as Error));
    expect(refused?.message).to.match(/did not take a message: .*nack/i);
    expect(log.acks).to.have.length(1);
  });

  it('in a flow, acks the events the broker confirmed and fails the ones it refused back to a transactional source', async () => {
    const queue = await client.queue(unique('full'), { durable: false, maxLength: 2, arguments: { 'x-overflow': 'reject-publish' } });
    const probe: ProbeLog = { read: 0, acks: [], fails: [] };
    flow = await startFlow({
      registries: registriesWith([probeOnramp(probe)], []),
      onramp: { type: 'probe', config: { count: 5 } },
      offramp: { type: 'amqp', config: { amqp_addr: amqpAddr(server), routing_key: queue } },
    });
    await eventually(() => probe.acks.length + probe.fails.length === 5, 30_000, 'an ack or fail for each event');
    expect(probe.acks.sort()).to.deep.equal([1, 2]);
    expect(probe.fails.sort()).to.deep.equal([3, 4, 5]);
  });

  it('refuses to start when the exchange does not exist', async () => {
    const exchange = unique('no-such-exchange');
    let refused: Error | undefined;
    await open({ exchange }).catch((err: unknown) => (refused = err as Error));
    expect(refused?.message).to.match(new RegExp(`cannot publish to exchange '${exchange.replace(/\./g, '\\.')}' at amqp://guest:\\*\\*\\*@.*NOT_FOUND`));
  });

  it('refuses to start when the server cannot be reached', async () => {
    proxy = await relay(server);
    proxy.refuse();
    let refused: Error | undefined;
    await open({ amqp_addr: `amqp://guest:guest@127.0.0.1:${proxy.port}/%2f` }).catch((err: unknown) => (refused = err as Error));
    expect(refused?.message).to.match(/cannot connect to amqp:\/\/guest:\*\*\*@127\.0\.0\.1:\d+\/%2f: /);
  });

  it('triggers the breaker when the connection goes, fails sends while it is down, and restores once reconnected', async () => {
    proxy = await relay(server);
    const queue = await client.queue(unique('out'), { durable: false });
    const { sink, log } = await open({ amqp_addr: `amqp://guest:guest@127.0.0.1:${proxy.port}/%2f`, routing_key: queue });
    await sink.send([payload({ n: 1 })], event({ n: 1 }));
    expect(log.down).to.equal(false);
    proxy.refuse();
    await eventually(() => log.down, 30_000, 'the breaker triggered');
    expect(() => sink.send([payload({ n: 2 })], event({ n: 2 }))).to.throw(/not connected/);
    proxy.accept();
    await eventually(() => !log.down, 30_000, 'the breaker restored');
    await sink.send([payload({ n: 3 })], event({ n: 3 }));
    const got = await client.take(queue, 2);
    expect(got.map((m) => m.body)).to.deep.equal(['{"n":1}', '{"n":3}']);
    expect(log.triggers).to.equal(1);
  });
});
