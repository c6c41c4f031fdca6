import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { relay, type Relay } from '../amqp/helpers';
import { LoopbackGuard, PROJECT, serviceAccount, TestClient, useEmulator } from './helpers';

/**
 * Published and activated over the REST API: Pub/Sub (the fake) → pubsub
 * onramp → pipeline → file offramp, with a credentials file and a
 * subscription id alone (the project comes from the file), while every TCP
 * connection this process opens is watched: none may leave loopback (the
 * auth library must never reach for a cloud metadata server).
 */
describe('pubsub end to end over REST (Pub/Sub fake pstest), nothing leaves loopback', function () {
  this.timeout(40_000);
  let server: ServiceAddress;
  let client: TestClient;
  let rt: Started;
  let dir: string;
  let proxy: Relay | undefined;
  const guard = new LoopbackGuard();

  before(async function () {
    server = await requireService(this, 'pubsub');
    useEmulator(server);
    dir = mkdtempSync(join(tmpdir(), 'eddy-pubsub-e2e-'));
    guard.install();
  });
  after(() => {
    guard.uninstall();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    client = new TestClient();
    rt = await startRuntime();
  });
  afterEach(async () => {
    await rt.stop();
    await client.close();
    await proxy?.close();
    proxy = undefined;
    useEmulator(server);
  });

  async function publish(kind: string, body: unknown): Promise<void> {
    const reply = await call(rt.base, 'POST', `/${kind}`, { body });
    expect(reply.status, `${kind}: ${reply.text}`).to.equal(201);
  }

  it('the guard refuses a connection that would leave loopback before a packet is sent, and records it', async () => {
    const before = guard.refused.length;
    const socket = connect(9, '192.0.2.1'); // TEST-NET-1: no such host anywhere
    const error = await new Promise<Error>((resolve) => socket.once('error', resolve));
    expect(error.message).to.contain('would leave loopback');
    expect(guard.refused.slice(before)).to.deep.equal(['192.0.2.1']);
  });

  it('pubsub onramp -> passthrough -> file offramp: every message arrives and is acked, and every connection stayed on loopback', async () => {
    // through a relay of its own: a target no earlier client has a pooled gRPC connection to, so the guard must see a new one
    proxy = await relay(server);
    useEmulator({ host: '127.0.0.1', port: proxy.port });
    const { topic, subscription } = await client.topicWithSubscription();
    const pem = join(dir, 'service-account.json');
    writeFileSync(pem, JSON.stringify(serviceAccount(PROJECT)));
    const out = join(dir, 'out.jsonl');
    const refusedBefore = guard.refused.length;
    const targetsBefore = guard.targets.length;

    await publish('onramp', { id: 'pubsub_in', type: 'pubsub', config: { subscription, pem, max_messages: 16 } });
    await publish('offramp', { id: 'file_out', type: 'file', config: { file: out } });
    await publish('binding', {
      id: 'relay',
      links: {
        '/onramp/pubsub_in/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
        '/pipeline/system::passthrough/{instance}/out': ['/offramp/file_out/{instance}/in'],
      },
    });
    expect((await call(rt.base, 'POST', '/binding/relay/main')).status).to.equal(201);

    const messages = Array.from({ length: 30 }, (_, n) => JSON.stringify({ n }));
    await client.publish(topic, messages);
    const lines = () => {
      try {
        return readFileSync(out, 'utf8')
          .split('\n')
          .filter((l) => l !== '');
      } catch {
        return [];
      }
    };
    await eventually(() => lines().length === 30, 30_000, 'thirty lines in the file');
    expect(lines().map((l) => JSON.parse(l).n)).to.have.members(messages.map((_, n) => n));
    expect((await call(rt.base, 'DELETE', '/binding/relay/main')).status).to.equal(200);
    // each message was acked once the file offramp had it: none comes back
    expect(await client.pending(subscription)).to.deep.equal([]);

    const targets = guard.targets.slice(targetsBefore);
    // the guard saw the clients' connection to the fake (gRPC over HTTP/2), so it would have seen any other
    expect(targets, 'connections to the Pub/Sub fake').to.include(`127.0.0.1:${proxy.port}`);
    expect(guard.refused.slice(refusedBefore), `connections off loopback among ${JSON.stringify([...new Set(targets)])}`).to.deep.equal([]);
  });
});
