import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EddyEvent } from '../../../src/core/event';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { relay, type Relay } from '../amqp/helpers';
import { bodies, consume, PROJECT, serviceAccount, TestClient, useEmulator, type Consumed } from './helpers';

/**
 * The pubsub onramp against Google's own Pub/Sub fake (pstest, served by
 * `scripts/services start pubsub`) through Google's own client on both
 * sides: one event per message with the spec's meta, acks and nacks to
 * Pub/Sub on eddy's acks and fails, flow control, the breaker, bad input,
 * and activations that fail with a clear cause within a bounded time.
 */
describe('pubsub onramp (Pub/Sub fake pstest)', function () {
  this.timeout(40_000);
  let server: ServiceAddress;
  let client: TestClient;
  let flow: Consumed | undefined;
  let proxy: Relay | undefined;
  let dir: string;

  before(async function () {
    server = await requireService(this, 'pubsub');
    useEmulator(server);
    dir = mkdtempSync(join(tmpdir(), 'eddy-pubsub-'));
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    client = new TestClient();
  });
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
    await client.close();
    await proxy?.close();
    proxy = undefined;
    useEmulator(server);
  });

  const config = (subscription: string, extra: Record<string, unknown> = {}) => ({ subscription, project_id: PROJECT, ...extra });
  const ids = (events: EddyEvent[]) => events.map((e) => e.meta.message_id as string);

  it('makes one event per message with meta message_id, acknowledgement_id, attributes and publish_time; acked messages are not delivered again', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    flow = await consume(config(subscription));
    const published = await client.publish(topic, ['{"n":1}', '{"n":2}', '{"n":3}'], { tenant: 'a' });
    await eventually(() => flow!.out.length === 3, 30_000, 'three events');
    expect(bodies(flow.out)).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(ids(flow.out)).to.have.members(published);
    for (const event of flow.out) {
      expect(event.meta.acknowledgement_id).to.be.a('string').and.not.equal('');
      expect(event.meta.attributes).to.deep.equal({ tenant: 'a' });
      expect(new Date(event.meta.publish_time as string).getTime()).to.be.greaterThan(0);
      expect(event.originUri).to.equal(`svc-pubsub://${PROJECT}/${subscription}`);
      expect(event.transactional).to.equal(true);
    }
    await flow.stop();
    flow = undefined;
    // closing the subscriber nacks whatever is not acked: an acked message alone stays away
    expect(await client.pending(subscription)).to.deep.equal([]);
  });

  it('nacks a failed event: Pub/Sub redelivers the message (same message_id), and acks it once its event is delivered', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    const attempts = new Map<string, number>();
    flow = await consume(config(subscription), (event) => {
      const id = event.meta.message_id as string;
      const n = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, n);
      if (n === 1) throw new Error('first attempt fails');
    });
    const [id] = await client.publish(topic, ['{"n":1}']);
    await eventually(() => flow!.out.length === 2, 30_000, 'the event twice');
    expect(ids(flow.out)).to.deep.equal([id, id]);
    // a redelivery has a new ack id
    expect(flow.out[0].meta.acknowledgement_id).to.not.equal(flow.out[1].meta.acknowledgement_id);
    await flow.stop();
    flow = undefined;
    expect(await client.pending(subscription)).to.deep.equal([]);
  });

  it('holds at most max_messages messages unacked (flow control): the rest waits until the sink finishes', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    const held: (() => void)[] = [];
    let mostHeld = 0;
    flow = await consume(
      config(subscription, { max_messages: 5 }),
      () =>
        new Promise<void>((resolve) => {
          held.push(resolve);
          mostHeld = Math.max(mostHeld, held.length);
        }),
    );
    await client.publish(
      topic,
      Array.from({ length: 20 }, (_, n) => `{"n":${n}}`),
    );
    // the sink lets go only of a full window of five: a sixth message delivered while five are unacked
    // would be counted by mostHeld (the twenty are all at the client at once, so it would come)
    const releaser = setInterval(() => {
      if (held.length >= 5) held.splice(0).forEach((resolve) => resolve());
    }, 10);
    try {
      await eventually(() => flow!.out.length === 20, 30_000, 'all 20 events, five at a time');
    } finally {
      clearInterval(releaser);
      held.splice(0).forEach((resolve) => resolve());
    }
    expect(mostHeld, 'the most events in flight at once').to.equal(5);
    expect(new Set(bodies(flow.out)).size).to.equal(20);
  });

  it('passes no event while the breaker is triggered and holds what arrives meanwhile: after restore every message arrives once, none is lost', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    flow = await consume(config(subscription));
    const onramp = flow.runtime.onramp(flow.onramp)!.runtime;
    onramp.contraflow({ kind: 'trigger', from: 'test' });
    await client.publish(
      topic,
      Array.from({ length: 10 }, (_, n) => `{"n":${n}}`),
    );
    // the streaming pull handed all ten over, and the onramp holds them: one passed on while triggered would not be among them
    await eventually(() => onramp.inputs()!.held === 10, 30_000, 'ten messages held');
    expect(flow.out).to.have.length(0);
    expect(onramp.counters.in).to.equal(0);
    onramp.contraflow({ kind: 'restore', from: 'test' });
    await eventually(() => flow!.out.length === 10, 30_000, 'ten events after restore');
    expect(new Set(bodies(flow.out)).size).to.equal(10);
    await flow.stop();
    flow = undefined;
    expect(await client.pending(subscription)).to.deep.equal([]);
  });

  it('sends an undecodable message to err with its text and acks it (on_decode_error: ack); the messages after it still arrive', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    flow = await consume(config(subscription));
    await client.publish(topic, ['not json']);
    await eventually(() => flow!.err.length === 1, 30_000, 'the error');
    await client.publish(topic, ['{"n":2}']);
    await eventually(() => flow!.out.length === 1, 30_000, 'the good event');
    expect((flow.err[0].data as { raw: string }).raw).to.equal('not json');
    expect(bodies(flow.out)).to.deep.equal(['{"n":2}']);
    await flow.stop();
    flow = undefined;
    expect(await client.pending(subscription)).to.deep.equal([]);
  });

  it('with on_decode_error: nack, an undecodable message goes back to Pub/Sub: it is redelivered (for a dead-letter policy to take)', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    flow = await consume(config(subscription, { on_decode_error: 'nack' }));
    await client.publish(topic, ['not json']);
    await eventually(() => flow!.err.length >= 2, 30_000, 'the error twice: redelivered');
    expect(flow.err.every((e) => (e.data as { raw: string }).raw === 'not json')).to.equal(true);
    expect(flow.out).to.have.length(0);
  });

  it('pulls again after its connection was cut (the client reconnects): every message arrives', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    proxy = await relay(server);
    useEmulator({ host: '127.0.0.1', port: proxy.port });
    flow = await consume(config(subscription));
    await client.publish(topic, ['{"n":1}']);
    await eventually(() => flow!.out.length === 1, 30_000, 'the first event');
    const before = proxy.connections;
    proxy.cut();
    await client.publish(
      topic,
      Array.from({ length: 5 }, (_, n) => `{"n":${n + 2}}`),
    );
    await eventually(() => new Set(bodies(flow!.out)).size === 6, 30_000, 'all six messages');
    expect(proxy.connections).to.be.greaterThan(before);
  });

  it('takes the project from the credentials file of pem, given a subscription id alone', async () => {
    const { topic, subscription } = await client.topicWithSubscription();
    const pem = join(dir, 'service-account.json');
    writeFileSync(pem, JSON.stringify(serviceAccount(PROJECT)));
    flow = await consume({ subscription, pem });
    await client.publish(topic, ['{"n":1}']);
    await eventually(() => flow!.out.length === 1, 30_000, 'the event');
    expect(flow.out[0].originUri).to.equal(`svc-pubsub://${PROJECT}/${subscription}`);
  });
});
