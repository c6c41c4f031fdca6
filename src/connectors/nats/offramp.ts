import type { MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { EddyEvent, Meta } from '../../core/event';
import type { OfframpType, Sink } from '../connector';
import { closeConnection, describe, hostsSchema, natsConnect, optionsSchema, publishHeaders, validateOptions, watchStatus } from './connection';
import { requirePackage } from '../../core/packages';
import { headerMap, secretHeaders } from '../../schema/fields';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const { jetstream } = requirePackage<typeof import('@nats-io/jetstream')>('@nats-io/jetstream', 'the nats connector');

const configSchema = s.object(
  {
    hosts: hostsSchema,
    subject: s.string({
      minLength: 1,
      pattern: '^[^\\s*>]+$',
      description: 'subject to publish to (no wildcards); meta `nats.subject` overrides it per event',
    }),
    reply: s.string({ minLength: 1, pattern: '^[^\\s*>]+$', description: 'reply subject set on every message; meta `nats.reply` overrides it per event' }),
    headers: headerMap(
      s.oneOf([s.string(), s.array(s.string())]),
      'headers set on every message (name to a value or a list of values); meta `nats.headers` overrides them by name',
    ),
    secret_headers: secretHeaders(),
    options: optionsSchema,
    jetstream: s.boolean({
      default: false,
      description: 'publish through JetStream and ack an event once the stream stored it (a stream must capture the subject)',
    }),
  },
  { description: 'Publishes events to a NATS subject, or to JetStream with an ack once stored.', required: ['hosts', 'subject'] },
);

type NatsOfframpConfig = Static<typeof configSchema>;

/** The type's `validate`, which `create` runs too. */
function validate(config: NatsOfframpConfig): void {
  validateOptions(config.options);
  if ((config.options.reconnect_buffer_size ?? 0) > 0) {
    throw new Error(
      'options.reconnect_buffer_size: only 0 is possible here: nats.js keeps no publishes for a reconnect, so the offramp fails a send while disconnected (its event fails back to the source) instead of buffering it',
    );
  }
  if (config.jetstream && config.reply !== undefined)
    throw new Error('reply and jetstream do not go together: a JetStream publish uses the reply subject for its PubAck');
  publishHeaders(config.headers, undefined); // header names and values the client refuses fail the publish, not the first event
}

/** How long a JetStream publish waits for the stream's PubAck before the event fails. */
const PUBACK_TIMEOUT_MS = 5000;
/** How long the server may take to answer a flush (its PONG) before the events waiting on it fail. */
const FLUSH_TIMEOUT_MS = 10_000;

/**
 * nats: publishes each event (each batch member) as one message to
 * `subject`, with `reply` as its reply subject and `headers`; the event's
 * meta `nats` overrides them: `nats.subject`, `nats.reply`, and
 * `nats.headers` (name to a string or list of strings, over the configured
 * headers by name). That is the meta the nats onramp sets, so a passthrough
 * forwards a message with its headers and reply subject.
 *
 * Core NATS: an event is acked once the server has answered a flush sent
 * after its messages (a PONG means it processed them; the sends of one tick
 * share one flush), and failed when the connection drops first. With
 * `jetstream: true` each message is published to JetStream and the event is
 * acked once the stream stored all of its messages (their PubAcks), failed
 * when one is refused (no stream for the subject) or times out.
 *
 * The connection is opened when the instance is created (an unreachable
 * server fails the activation). When it is lost later the circuit breaker
 * is triggered and sends fail at once (nothing is buffered for the
 * reconnect); nats.js reconnects with back-off and the breaker is restored
 * when it is back.
 */
export const natsOfframp: OfframpType<NatsOfframpConfig> = {
  name: 'nats',
  defaultCodec: 'json',
  placement: 'every-worker', // publishers write in parallel (docs/workers.md)
  autoAck: false,
  example: { hosts: ['127.0.0.1:4222'], subject: 'eddy.out' },
  configSchema,
  validate,
  async create(config, ctx): Promise<Sink> {
    validate(config);
    const client = await natsConnect(config.hosts, config.options, `eddy ${ctx.url}`);
    const { nc } = client;
    const js: JetStreamClient | undefined = config.jetstream ? jetstream(nc, { timeout: PUBACK_TIMEOUT_MS }) : undefined;
    const baseHeaders = config.headers;
    let connected = true;
    let gone: string | undefined;
    let closing = false;
    watchStatus(client, ctx.logger, ctx.url, {
      down: () => {
        connected = false;
        ctx.trigger();
      },
      up: () => {
        connected = true;
        ctx.restore();
      },
      closed: (err) => {
        connected = false;
        gone = `the NATS connection is closed${err ? `: ${describe(err)}` : ''}`;
        if (!closing) ctx.trigger();
      },
    });
    const flusher = new Flusher(nc);

    const target = (event: EddyEvent) => {
      const meta = natsMeta(event.meta);
      const subject = stringMeta(meta, 'subject') ?? config.subject;
      // a JetStream publish is a request: its reply subject is the PubAck's, so meta nats.reply is not used
      const reply = js ? undefined : (stringMeta(meta, 'reply') ?? config.reply);
      return { subject, reply, headers: publishHeaders(baseHeaders, meta) };
    };

    return {
      async send(payloads, event) {
        if (!connected) throw new Error(gone ?? 'not connected to NATS (reconnecting)');
        const started = Date.now();
        const { subject, reply, headers } = target(event);
        if (js) await publishJetStream(js, subject, headers, payloads);
        else {
          for (const data of payloads) nc.publish(subject, data, { reply, headers });
          await flusher.flush();
        }
        if (event.transactional) ctx.insight('ack', event, { time: Date.now() - started });
      },
      async close() {
        closing = true;
        await closeConnection(nc, ctx.logger, ctx.url);
      },
    };
  },
};

/** The event's meta `nats`, if it is a map. */
function natsMeta(meta: Meta): Meta | undefined {
  const nats = meta.nats;
  return nats !== null && typeof nats === 'object' && !Array.isArray(nats) ? (nats as Meta) : undefined;
}

function stringMeta(meta: Meta | undefined, key: 'subject' | 'reply'): string | undefined {
  const value = meta?.[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value === '' || /[\s*>]/.test(value))
    throw new Error(`meta nats.${key} must be a subject without spaces or wildcards, not ${(JSON.stringify(value) as string | undefined)?.slice(0, 80)}`);
  return value;
}

/** Every member of a batch stored by the stream, or the event fails (a JetStream reply subject is the PubAck's own). */
async function publishJetStream(js: JetStreamClient, subject: string, headers: MsgHdrs | undefined, payloads: Buffer[]): Promise<void> {
  try {
    await Promise.all(payloads.map((data) => js.publish(subject, data, { headers })));
  } catch (err) {
    throw new Error(`JetStream publish to ${subject} failed: ${describe(err)}`);
  }
}

/**
 * One flush (PING, answered by PONG once the server processed everything
 * before it) for all the sends of one tick, rather than a round trip each.
 * A lost connection rejects it (nats.js fails pending flushes when it
 * redials); a server that does not answer in time fails it too.
 */
class Flusher {
  private next: Promise<void> | undefined;

  constructor(private readonly nc: NatsConnection) {}

  flush(): Promise<void> {
    if (this.next) return this.next;
    this.next = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      // publishes after this point need the next flush
      this.next = undefined;
      return this.ping();
    });
    return this.next;
  }

  private async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.nc.flush(),
        new Promise<never>(
          (_, reject) => (timer = setTimeout(() => reject(new Error(`NATS did not confirm within ${FLUSH_TIMEOUT_MS} ms`)), FLUSH_TIMEOUT_MS)),
        ),
      ]);
    } catch (err) {
      throw new Error(`publish not confirmed by NATS: ${describe(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
