import { hostname } from 'node:os';
import type * as KafkaJs from 'kafkajs';
import type { Message, Producer } from 'kafkajs';
import { requirePackage } from '../../core/packages';
import type { EddyEvent } from '../../core/event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Backoff } from '../_shared/backoff';
import { brokerAddress, clientConfig, isConnectionError, kafkaSettings, rdkafkaOptions, rootMessage, type KafkaSettings } from './options';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const { Kafka, Partitioners } = requirePackage<typeof KafkaJs>('kafkajs', 'the kafka offramp');

const configSchema = s.object(
  {
    topic: s.string({ minLength: 1, description: 'topic to write to' }),
    brokers: s.array(s.string({ minLength: 1 }), { minItems: 1, description: 'bootstrap brokers, host:port (port 9092 when left out)' }),
    hostname: s.string({ minLength: 1, description: 'client id the brokers see (default: the system host name; rdkafka_options client.id overrides it)' }),
    key: s.string({ description: 'message key (default: none); meta kafka_key overrides it per event' }),
    rdkafka_options: rdkafkaOptions(
      'librdkafka option names mapped onto the client (see docs/connectors/kafka.md): client.id, acks, compression.codec (none, gzip), linger.ms, batch.num.messages, security.protocol, sasl.*, ssl.* and more; any other name is refused',
    ),
  },
  { required: ['topic', 'brokers'] },
);

export type KafkaOfframpConfig = Static<typeof configSchema>;

/** The sends gathered into one produce request. */
interface Pending {
  messages: Message[];
  /** the transactional events among them, acked when the broker acknowledged the request */
  acks: EddyEvent[];
  started: number;
  done: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

/**
 * kafka: a producer (kafkajs) writing every payload (each batch member) as
 * one message to `topic`, keyed by meta `kafka_key` or else config `key`.
 *
 * Sends that arrive within one turn of the event loop (or within
 * `linger.ms`) go to the broker as one produce request; each event's send
 * settles when the broker acknowledged that request (acks=all by default):
 * then a transactional event is acked with meta `time`, and a refusal or a
 * timeout fails it.
 *
 * The brokers are reached in `create` (none answering fails the
 * activation). When a request fails because the brokers cannot be reached,
 * the circuit breaker is triggered and sends fail at once while a probe
 * (a metadata request for the topic) retries with a bounded back-off;
 * when it answers, the breaker is restored.
 */
export const kafkaOfframp: OfframpType<KafkaOfframpConfig> = {
  name: 'kafka',
  defaultCodec: 'json',
  placement: 'every-worker', // producers write in parallel (docs/workers.md)
  autoAck: false,
  example: { topic: 'eddy-out', brokers: ['127.0.0.1:9092'] },
  configSchema,
  validate(config) {
    kafkaSettings('offramp', config.rdkafka_options);
  },
  // the producer's queue (librdkafka's queue.buffering.max.messages): a full one triggers the breaker
  maxInFlight: (config) => kafkaSettings('offramp', config.rdkafka_options).producer.queueMessages,
  async create(config, ctx) {
    const settings = kafkaSettings('offramp', config.rdkafka_options);
    const who = `kafka offramp ${ctx.url}`;
    const kafka = new Kafka(clientConfig(settings, config.brokers.map(brokerAddress), config.hostname ?? hostname(), ctx.logger, who));
    const sink = new KafkaSink(config, settings, kafka, ctx, who);
    await sink.open();
    return sink;
  },
};

class KafkaSink implements Sink {
  private readonly producer: Producer;
  private readonly key: Buffer | undefined;
  private pending: Pending | undefined;
  private flushTimer: NodeJS.Immediate | NodeJS.Timeout | undefined;
  /** the brokers are unreachable: the breaker is triggered and a probe runs */
  private down = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private readonly backoff = new Backoff();
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly config: KafkaOfframpConfig,
    private readonly settings: KafkaSettings,
    private readonly kafka: KafkaJs.Kafka,
    private readonly ctx: OfframpContext,
    private readonly who: string,
  ) {
    this.key = config.key === undefined ? undefined : Buffer.from(config.key, 'utf8');
    this.producer = kafka.producer({
      // the Java client's partitioning (murmur2 of the key); named so kafkajs does not warn about its v2 change
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: settings.producer.idempotent,
      maxInFlightRequests: settings.producer.idempotent ? 1 : undefined,
      metadataMaxAge: settings.metadataMaxAge,
      retry: settings.retry,
    });
  }

  async open(): Promise<void> {
    try {
      await this.producer.connect();
    } catch (err) {
      await this.producer.disconnect().catch(() => undefined);
      throw new Error(`cannot reach the kafka brokers ${this.config.brokers.join(', ')}: ${rootMessage(err)}`);
    }
  }

  send(payloads: Buffer[], event: EddyEvent): Promise<void> {
    if (this.down) throw new Error(`kafka offramp: the brokers ${this.config.brokers.join(', ')} cannot be reached`);
    const key = keyOf(event.meta.kafka_key) ?? this.key;
    const batch = (this.pending ??= this.newBatch());
    for (const value of payloads) batch.messages.push({ key, value });
    if (event.transactional) batch.acks.push(event);
    if (batch.messages.length >= this.settings.producer.batchMessages) this.flush();
    else if (this.flushTimer === undefined) {
      const linger = this.settings.producer.lingerMs;
      this.flushTimer = linger > 0 ? setTimeout(() => this.flush(), linger) : setImmediate(() => this.flush());
    }
    return batch.done;
  }

  async close(): Promise<void> {
    this.flush();
    this.closed = true;
    clearTimeout(this.probeTimer);
    await Promise.allSettled([...this.inFlight, this.probing]);
    await this.producer.disconnect().catch((err: Error) => this.ctx.logger.debug(`${this.who}: disconnect: ${err.message}`));
  }

  private newBatch(): Pending {
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    return { messages: [], acks: [], started: performance.now(), done, resolve, reject };
  }

  /** One produce request for what was gathered. */
  private flush(): void {
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer as NodeJS.Timeout);
      clearImmediate(this.flushTimer as NodeJS.Immediate);
      this.flushTimer = undefined;
    }
    const batch = this.pending;
    if (!batch) return;
    this.pending = undefined;
    const { acks, compression, timeout } = this.settings.producer;
    const request = this.producer
      .send({ topic: this.config.topic, messages: batch.messages, acks, compression, timeout })
      .then(
        () => {
          const time = performance.now() - batch.started;
          for (const event of batch.acks) this.ctx.insight('ack', event, { time });
          batch.resolve();
        },
        (err: unknown) => {
          if (isConnectionError(err)) this.lost(err);
          batch.reject(new Error(`kafka offramp: ${this.config.topic}: ${rootMessage(err)}`));
        },
      )
      .finally(() => this.inFlight.delete(request));
    this.inFlight.add(request);
  }

  /** The brokers went away: trigger the breaker and probe until one answers. */
  private lost(err: unknown): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.ctx.trigger();
    this.ctx.logger.warn(`${this.who}: the brokers cannot be reached (${rootMessage(err)}); sends fail until they answer again`);
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.closed) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      this.probing = this.probe().finally(() => (this.probing = undefined));
    }, this.backoff.next());
  }

  /** A metadata request for the topic through a short-lived admin client: the brokers really answer. */
  private async probe(): Promise<void> {
    const admin = this.kafka.admin({ retry: { retries: 0 } });
    let ok = false;
    try {
      await admin.connect();
      await admin.fetchTopicMetadata({ topics: [this.config.topic] });
      ok = true;
    } catch (err) {
      this.ctx.logger.debug(`${this.who}: probe: ${rootMessage(err)}`);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    if (this.closed) return;
    if (!ok) return this.scheduleProbe();
    this.down = false;
    this.backoff.reset();
    this.ctx.logger.info(`${this.who}: the brokers answer again`);
    this.ctx.restore();
  }
}

/** `$kafka_key`: bytes or text; anything else as its JSON text. */
function keyOf(value: unknown): Buffer | undefined {
  if (value === undefined || value === null) return undefined;
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value);
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return Buffer.from(JSON.stringify(value), 'utf8');
}
