import { generateKeyPairSync } from 'node:crypto';
import { Socket, isIP } from 'node:net';
import { PubSub, type Topic } from '@google-cloud/pubsub';
import type { ServiceAddress } from '../../helpers/services';
import { consumeWith, type Consumed, type SinkFn } from '../consume';

/**
 * The test side of the pubsub connector tests: Google's own client
 * (`@google-cloud/pubsub`) creating topics and subscriptions in, and
 * publishing to, the Pub/Sub fake (pstest) that `scripts/services start
 * pubsub` runs; names unique per test run so runs never share a topic.
 */

/** Every test's project; the fake takes any. */
export const PROJECT = 'eddy-test';

/**
 * Points Google's client libraries at the fake, in this process and the
 * children it starts: PUBSUB_EMULATOR_HOST (plaintext, no credentials), and
 * METADATA_SERVER_DETECTION=none so that the auth library never probes the
 * metadata server of a Google Cloud host (which would leave loopback).
 */
export function useEmulator({ host, port }: ServiceAddress): void {
  process.env.PUBSUB_EMULATOR_HOST = `${host}:${port}`;
  process.env.METADATA_SERVER_DETECTION = 'none';
}

let counter = 0;
/** A topic or subscription id no other test or run uses. */
export function unique(what: string): string {
  return `eddy-${what}-${process.pid}-${Date.now().toString(36)}-${++counter}`;
}

/** An admin and publisher client; what it creates is deleted on `close`. */
export class TestClient {
  readonly pubsub = new PubSub({ projectId: PROJECT });
  private readonly topics: Topic[] = [];
  private readonly subscriptions: string[] = [];

  /** A fresh topic and a subscription on it (ack deadline 10 s, the shortest the fake allows). */
  async topicWithSubscription(options: { ackDeadlineSeconds?: number } = {}): Promise<{ topic: Topic; subscription: string }> {
    const [topic] = await this.pubsub.createTopic(unique('topic'));
    this.topics.push(topic);
    const id = unique('sub');
    await topic.createSubscription(id, { ackDeadlineSeconds: options.ackDeadlineSeconds ?? 10 });
    this.subscriptions.push(id);
    return { topic, subscription: id };
  }

  /** Publishes each body (with attributes) and waits for the server's message ids. */
  async publish(topic: Topic, bodies: (string | Buffer)[], attributes: Record<string, string> = {}): Promise<string[]> {
    return Promise.all(bodies.map((body) => topic.publishMessage({ data: Buffer.isBuffer(body) ? body : Buffer.from(body), attributes })));
  }

  /**
   * The messages a subscription would deliver right now (a synchronous pull
   * that returns at once), nacked again so they stay; none means everything
   * was acked.
   */
  async pending(id: string): Promise<string[]> {
    const name = `projects/${PROJECT}/subscriptions/${id}`;
    const call = <T>(method: string, reqOpts: object) =>
      new Promise<T>((resolve, reject) =>
        this.pubsub.request<T>({ client: 'SubscriberClient', method, reqOpts, gaxOpts: { timeout: 10_000 } }, (err, res) =>
          err ? reject(err) : resolve(res as T),
        ),
      );
    interface Pulled {
      receivedMessages?: { ackId: string; message: { data: Uint8Array } }[];
    }
    const { receivedMessages = [] } = await call<Pulled>('pull', { subscription: name, maxMessages: 1000, returnImmediately: true });
    if (receivedMessages.length > 0) {
      await call('modifyAckDeadline', { subscription: name, ackIds: receivedMessages.map((m) => m.ackId), ackDeadlineSeconds: 0 });
    }
    return receivedMessages.map((m) => Buffer.from(m.message.data).toString('utf8'));
  }

  /** Deletes a subscription now (a test of what happens to a missing one). */
  async deleteSubscription(id: string): Promise<void> {
    await this.pubsub.subscription(id).delete();
  }

  async close(): Promise<void> {
    for (const id of this.subscriptions)
      await this.pubsub
        .subscription(id)
        .delete()
        .catch(() => undefined);
    for (const topic of this.topics) await topic.delete().catch(() => undefined);
    await this.pubsub.close();
  }
}

export { bodies, type Consumed, type SinkFn } from '../consume';

/** A pubsub onramp in a consuming flow (see `consumeWith`). */
export const consume = (config: Record<string, unknown>, sink?: SinkFn, extra?: Record<string, unknown>): Promise<Consumed> =>
  consumeWith('pubsub', config, sink, extra);

/**
 * Watches every TCP connection this process opens (Socket#connect is where
 * net, tls, http, http2 and fetch all end up) and refuses, before any packet
 * is sent, those that would leave loopback: they fail with an error and are
 * recorded in `refused`. `targets` lists every `host:port` asked for.
 */
export class LoopbackGuard {
  readonly targets: string[] = [];
  readonly refused: string[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with the socket as `this` (apply) and put back by uninstall
  private readonly original = Socket.prototype.connect;

  install(): void {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the patched connect gets the socket as `this`; the guard is reached through this name
    const guard = this;
    const original = this.original;
    Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
      const target = targetOf(args);
      if (target !== undefined) {
        guard.targets.push(`${target.host}:${target.port}`);
        if (!isLoopback(target.host)) {
          guard.refused.push(target.host);
          process.nextTick(() => this.destroy(new Error(`test guard: a connection to ${target.host} would leave loopback`)));
          return this;
        }
      }
      return (original as (...a: unknown[]) => Socket).apply(this, args);
    };
  }

  uninstall(): void {
    Socket.prototype.connect = this.original;
  }
}

/** Host and port of Socket#connect's arguments (options object, or port then host); undefined for a local (IPC) path. */
function targetOf(args: unknown[]): { host: string; port: string } | undefined {
  let first = args[0];
  // net.connect hands over [options, callback] as one normalised array
  if (Array.isArray(first)) first = first[0];
  if (first !== null && typeof first === 'object') {
    const options = first as { host?: string; port?: unknown; path?: string };
    if (options.path !== undefined) return undefined;
    return { host: options.host ?? 'localhost', port: String(options.port) };
  }
  if (typeof first === 'string' && Number.isNaN(Number(first))) return undefined; // a path
  return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: String(first) };
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.startsWith('::ffff:127.');
  return false;
}

/** A service-account key file as the Cloud console downloads it, with a key made here (the fake checks no credentials). */
export function serviceAccount(project: string): Record<string, string> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    type: 'service_account',
    project_id: project,
    private_key_id: 'eddy-test-key',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: `eddy-test@${project}.iam.gserviceaccount.com`,
    client_id: '1',
    token_uri: 'https://oauth2.googleapis.com/token',
  };
}
