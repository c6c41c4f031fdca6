import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { amqpAddr, bodies, consume, relay, TestClient, unique, type Consumed, type Relay } from './helpers';

/**
 * The amqp onramp against the real RabbitMQ: declare and bind on
 * activation, one event per message with `amqp` meta, acks and nacks to the
 * broker on eddy's acks and fails, the prefetch bound, pause by cancelling
 * the consumer, and reconnects that lose nothing.
 */
describe('amqp onramp (real RabbitMQ)', function () {
  this.timeout(40_000);
  let server: ServiceAddress;
  let client: TestClient;
  let flow: Consumed | undefined;
  let proxy: Relay | undefined;

  before(async function () {
    server = await requireService(this, 'rabbitmq');
  });
  beforeEach(async () => {
    client = await TestClient.open(server);
  });
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
    await proxy?.close();
    proxy = undefined;
    await client.close();
  });

  /** An onramp config for a fresh queue bound to amq.topic with a fresh routing key. */
  function bound(extra: Record<string, unknown> = {}) {
    const key = unique('key');
    const queue = client.track(unique('queue'));
    return { key, queue, config: { amqp_addr: amqpAddr(server), exchange: 'amq.topic', routing_key: key, queue_name: queue, queue_options: {}, ...extra } };
  }

  it('declares and binds the queue; each message is one event with meta amqp (delivery, headers, properties), acked to the broker once delivered', async () => {
    const { key, queue, config } = bound();
    flow = await consume(config);
    await client.publish('amq.topic', key, ['{"n":1}', '{"n":2}'], { headers: { tenant: 'a' }, contentType: 'application/json', messageId: 'm-1' });
    await eventually(() => flow!.out.length === 2, 30_000, 'two events');
    expect(bodies(flow.out)).to.deep.equal(['{"n":1}', '{"n":2}']);
    const meta = flow.out[0].meta.amqp as Record<string, Record<string, unknown>>;
    expect(meta.delivery).to.include({ exchange: 'amq.topic', routing_key: key, redelivered: false });
    expect(meta.delivery.delivery_tag).to.be.a('number');
    expect(meta.headers).to.deep.equal({ tenant: 'a' });
    expect(meta.properties).to.include({ content_type: 'application/json', message_id: 'm-1' });
    expect(flow.out[0].originUri).to.equal(`svc-amqp://${server.host}:${server.port}/${encodeURIComponent(queue)}`);
    expect(flow.out[0].transactional).to.equal(true);
    await flow.stop();
    flow = undefined;
    // acked: nothing came back to the queue when eddy's connection closed
    expect((await client.depth(queue)).messageCount).to.equal(0);
  });

  it('nacks a failed event: the message is requeued, redelivered (meta redelivered: true) and acked once its event is delivered', async () => {
    const { key, queue, config } = bound();
    const attempts = new Map<string, number>();
    flow = await consume(config, (event) => {
      const body = JSON.stringify(event.data);
      const n = (attempts.get(body) ?? 0) + 1;
      attempts.set(body, n);
      if (n === 1) throw new Error('first attempt fails');
    });
    await client.publish('amq.topic', key, ['{"n":1}']);
    await eventually(() => flow!.out.length === 2, 30_000, 'the event twice');
    const redelivered = (e: EddyEvent) => (e.meta.amqp as { delivery: { redelivered: boolean } }).delivery.redelivered;
    expect(flow.out.map(redelivered)).to.deep.equal([false, true]);
    await flow.stop();
    flow = undefined;
    expect((await client.depth(queue)).messageCount).to.equal(0);
  });

  describe('on a queue with a dead-letter exchange (declared by the test; the onramp checks it with passive)', () => {
    let queue: string;
    let dead: string;
    beforeEach(async () => {
      dead = await client.queue(unique('dead'), { durable: false });
      queue = await client.queue(unique('queue'), { durable: false, deadLetterExchange: '', deadLetterRoutingKey: dead });
    });
    const config = (extra: Record<string, unknown> = {}) => ({ amqp_addr: amqpAddr(server), queue_name: queue, queue_options: { passive: true }, ...extra });

    it('sends an undecodable message to err and rejects it to the dead letters; the messages after it still arrive', async () => {
      flow = await consume(config());
      await client.publish('', queue, ['not json', '{"n":2}']);
      await eventually(() => flow!.out.length === 1 && flow!.err.length === 1, 30_000, 'one event, one error');
      expect(bodies(flow.out)).to.deep.equal(['{"n":2}']);
      expect((flow.err[0].data as { raw: string }).raw).to.equal('not json');
      const rejected = await client.take(dead, 1);
      expect(rejected.map((m) => m.body)).to.deep.equal(['not json']);
    });

    it('with requeue_failed: false, rejects a message whose event failed: it goes to the dead letters, not back to the queue', async () => {
      flow = await consume(config({ requeue_failed: false }), () => Promise.reject(new Error('refused')));
      await client.publish('', queue, ['{"n":1}']);
      const rejected = await client.take(dead, 1);
      expect(rejected.map((m) => m.body)).to.deep.equal(['{"n":1}']);
      expect(flow.out).to.have.length(1);
    });
  });

  it('holds at most `prefetch` messages unacked: the rest waits in the queue until the sink finishes', async () => {
    const { key, queue, config } = bound({ prefetch: 5 });
    const held: (() => void)[] = [];
    flow = await consume(config, () => new Promise<void>((resolve) => held.push(resolve)));
    await client.publish(
      'amq.topic',
      key,
      Array.from({ length: 20 }, (_, n) => `{"n":${n}}`),
    );
    await eventually(async () => held.length === 5 && (await client.depth(queue)).messageCount === 15, 30_000, '5 delivered, 15 waiting');
    // no sixth message while five are unacked
    expect(held).to.have.length(5);
    // from now on each send finishes at once
    const release = () => held.splice(0).forEach((resolve) => resolve());
    const releaser = setInterval(release, 10);
    try {
      await eventually(() => flow!.out.length === 20, 30_000, 'all 20 events');
    } finally {
      clearInterval(releaser);
      release();
    }
    expect(new Set(bodies(flow.out)).size).to.equal(20);
  });

  it('pause cancels the consumer: messages wait in the queue, and arrive after resume', async () => {
    const { key, queue, config } = bound();
    flow = await consume(config);
    await eventually(() => client.consumers(queue, 1), 30_000, 'the consumer');
    const onramp = flow.runtime.onramp(flow.onramp)!.runtime;
    onramp.contraflow({ kind: 'trigger', from: 'test' });
    await eventually(() => client.consumers(queue, 0), 30_000, 'the consumer cancelled');
    await client.publish('amq.topic', key, ['{"n":1}', '{"n":2}', '{"n":3}']);
    expect((await client.depth(queue)).messageCount).to.equal(3);
    expect(flow.out).to.have.length(0);
    onramp.contraflow({ kind: 'restore', from: 'test' });
    await eventually(() => flow!.out.length === 3, 30_000, 'three events after resume');
    expect(bodies(flow.out)).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}']);
  });

  it('declares the queue again when the server deletes it (the server cancels the consumer) and consumes on', async () => {
    const { key, queue, config } = bound();
    flow = await consume(config);
    await eventually(() => client.consumers(queue, 1), 30_000, 'the consumer');
    await client.deleteQueue(queue);
    await eventually(() => client.consumers(queue, 1), 30_000, 'the queue declared, bound and consumed again');
    await client.publish('amq.topic', key, ['{"n":1}']);
    await eventually(() => flow!.out.length === 1, 30_000, 'the event');
  });

  it('reconnects after losing the connection: messages not yet acked are redelivered, so every message arrives', async () => {
    proxy = await relay(server);
    const { key, queue, config } = bound({ amqp_addr: `amqp://guest:guest@127.0.0.1:${proxy.port}/%2f`, prefetch: 10 });
    // the first deliveries wait; the connection goes while they wait; after that every send finishes at once
    const waiting: (() => void)[] = [];
    let lost = false;
    flow = await consume(config, () => (lost ? undefined : new Promise<void>((resolve) => waiting.push(resolve))));
    await client.publish(
      'amq.topic',
      key,
      Array.from({ length: 30 }, (_, n) => `{"n":${n}}`),
    );
    await eventually(() => waiting.length === 10, 30_000, 'ten messages in flight');
    lost = true;
    proxy.cut();
    // the acks of the waiting events go to a channel that is gone: dropped; the broker redelivers those ten
    waiting.splice(0).forEach((resolve) => resolve());
    await eventually(() => new Set(bodies(flow!.out)).size === 30, 30_000, 'all 30 messages');
    await eventually(async () => (await client.depth(queue)).messageCount === 0, 30_000, 'an empty queue');
    expect(proxy.connections).to.be.at.least(2);
    const redelivered = flow.out.filter((e) => (e.meta.amqp as { delivery: { redelivered: boolean } }).delivery.redelivered);
    expect(redelivered.length).to.be.at.least(10);
  });

  describe('activation', () => {
    async function refusal(config: Record<string, unknown>): Promise<string> {
      try {
        flow = await consume(config);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error('activated');
    }

    it('fails naming the onramp and the cause when the server cannot be reached', async () => {
      proxy = await relay(server);
      proxy.refuse();
      const message = await refusal({ amqp_addr: `amqp://guest:secret@127.0.0.1:${proxy.port}/%2f`, queue_name: unique('queue'), queue_options: {} });
      expect(message).to.match(/onramp 'src' \(amqp\) cannot start: cannot connect to amqp:\/\/guest:\*\*\*@127\.0\.0\.1/);
      expect(message).to.not.contain('secret');
    });

    it('fails when the queue cannot be bound (no such exchange)', async () => {
      const { config } = bound({ exchange: unique('no-such-exchange') });
      const message = await refusal(config);
      expect(message).to.match(/onramp 'src' \(amqp\) cannot start: cannot bind queue '.*' at amqp:.* to exchange 'eddy-test\.no-such-exchange.*NOT_FOUND/);
    });

    it('refuses at publish time what it cannot honour: queue_options.nowait: true, and an address that is not amqp(s)', () => {
      const runtime = new Runtime({ logger: createLogger('silent') });
      const publish = (config: Record<string, unknown>) => () => runtime.publish('onramp', { id: 'src', type: 'amqp', config });
      expect(publish({ amqp_addr: amqpAddr(server), queue_name: 'q', queue_options: { nowait: true } })).to.throw(
        /config\.queue_options\.nowait: true is not supported/,
      );
      expect(publish({ amqp_addr: 'http://127.0.0.1:5672/', queue_name: 'q', queue_options: {} })).to.throw(
        /config\.amqp_addr: the scheme must be amqp or amqps/,
      );
      expect(publish({ amqp_addr: amqpAddr(server), queue_name: 'q' })).to.throw(/queue_options/);
    });

    it('fails when a passive queue does not exist', async () => {
      const message = await refusal({ amqp_addr: amqpAddr(server), queue_name: unique('missing'), queue_options: { passive: true } });
      expect(message).to.match(/cannot find queue 'eddy-test\.missing.*NOT_FOUND/);
    });
  });
});
