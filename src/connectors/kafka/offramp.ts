import { hostname } from 'node:os';
import type { MessageToProduce, Producer } from '@platformatic/kafka';
import type { EddyEvent, Meta } from '../../core/event';
import type { OfframpContext, OfframpType, Sink } from '../connector';
import { Backoff } from '../_shared/backoff';
import {
  brokerAddress,
  isConnectionError,
  javaPartitioner,
  kafkaSettings,
  platformatic,
  producerOptions,
  rdkafkaOptions,
  rootMessage,
  type KafkaSettings,
} from './options';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const { Producer: ProducerClass } = platformatic('the kafka offramp');

type Message = MessageToProduce;

/**
 * The bytes of message values gathered into one produce request at most.
 * The client writes each partition's messages as one record batch, and the
 * broker refuses a batch over its message.max.bytes (1 MB by default).
 */
const MAX_REQUEST_BYTES = 512 * 1024;

const configSchema = s.object(
  {
    topic: s.string({ minLength: 1, description: 'topic to write to' }),
    brokers: s.array(s.string({ minLength: 1 }), { minItems: 1, description: 'bootstrap brokers, host:port (port 9092 when left out)' }),
    hostname: s.string({ minLength: 1, description: 'client id the brokers see (default: the system host name; rdkafka_options client.id overrides it)' }),
    key: s.string({ description: 'message key (default: none); meta kafka_key overrides it per event' }),
    rdkafka_options: rdkafkaOptions(
      'librdkafka option names mapped onto the client (see docs/connectors/kafka.md): client.id, acks, compression.codec (none, gzip, snappy, lz4, zstd), linger.ms, batch.num.messages, security.protocol, sasl.*, ssl.* and more; any other name is refused',
    ),
  },
  { description: 'Produces events to a Kafka topic.', required: ['topic', 'brokers'] },
);

export type KafkaOfframpConfig = Static<typeof configSchema>;

/** The sends gathered into one produce request. */
interface Pending {
  messages: Message[];
  /** the bytes of their values */
  bytes: number;
  started: number;
  /** resolves with the acks' meta once the broker acknowledged the request */
  done: Promise<Meta>;
  resolve(meta: Meta): void;
  reject(err: Error): void;
}

/**
 * kafka: a producer (@platformatic/kafka) writing every payload (each batch member) as
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
 *
 * Keyed messages go to the partition the Java client picks (murmur2 of the
 * key, `& 0x7fffffff`, modulo the partition count); the client's own default
 * (`murmur2 >>> 0`) differs for a negative hash when the partition count is
 * not a power of two. Messages without a key go round robin.
 */
export const kafkaOfframp: OfframpType<KafkaOfframpConfig> = {
  name: 'kafka',
  defaultCodec: 'json',
  placement: 'every-worker', // producers write in parallel (docs/workers.md)
  // the machinery acks each event when its request was acknowledged, with the meta its promise resolves with (time)
  autoAck: true,
  // fed by a kafka onramp with guarantee: exactly_once, its messages go out in that onramp's transactions
  joinsTransactions: true,
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
    const sink = new KafkaSink(config, settings, ctx, who);
    await sink.open();
    return sink;
  },
};

class KafkaSink implements Sink {
  private readonly producer: Producer;
  /** joined to a transactional source: its messages go there, sent in the source's next transaction */
  private write: ((record: Message) => void) | undefined;
  readonly transactional = {
    cluster: async (): Promise<string> => (await this.producer.metadata({ topics: [this.config.topic] })).id,
    join: (write: (record: unknown) => void): void => {
      this.write = write;
    },
  };
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
    private readonly ctx: OfframpContext,
    private readonly who: string,
  ) {
    this.key = config.key === undefined ? undefined : Buffer.from(config.key, 'utf8');
    const brokers = config.brokers.map(brokerAddress);
    // the Java client's partition of a keyed message (not the client's default, see above); round robin without a key
    this.producer = new ProducerClass(producerOptions(settings, brokers, config.hostname ?? hostname(), { partitioner: javaPartitioner() }));
  }

  /** Reaches a broker (its API versions): what must work for the activation to succeed. */
  async open(): Promise<void> {
    try {
      await this.producer.listApis();
    } catch (err) {
      await this.producer.close().catch(() => undefined);
      throw new Error(`cannot reach the kafka brokers ${this.config.brokers.join(', ')}: ${rootMessage(err)}`);
    }
  }

  send(payloads: Buffer[], event: EddyEvent): Promise<Meta> | undefined {
    const key = keyOf(event.meta.kafka_key) ?? this.key;
    if (this.write) {
      // in a source's transaction: handed over now (the event is acked), committed or aborted with the source's offsets
      for (const value of payloads) this.write({ topic: this.config.topic, key, value });
      return;
    }
    if (this.down) throw new Error(`kafka offramp: the brokers ${this.config.brokers.join(', ')} cannot be reached`);
    const batch = (this.pending ??= this.newBatch());
    const topic = this.config.topic;
    for (const value of payloads) {
      batch.messages.push({ topic, key, value });
      batch.bytes += value.length;
    }
    if (batch.messages.length >= this.settings.producer.batchMessages || batch.bytes >= MAX_REQUEST_BYTES) this.flush();
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
    await this.producer.close().catch((err: unknown) => this.ctx.logger.debug(`${this.who}: close: ${err instanceof Error ? err.message : String(err)}`));
  }

  private newBatch(): Pending {
    const { promise: done, resolve, reject } = Promise.withResolvers<Meta>();
    return { messages: [], bytes: 0, started: performance.now(), done, resolve, reject };
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
    // acks, compression and the timeout are the producer's options
    const request = this.producer
      .send({ messages: batch.messages })
      .then(
        // one meta for the whole request: each of its events is acked with it
        () => batch.resolve({ time: performance.now() - batch.started }),
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

  /** A fresh metadata request for the topic, tried once: the brokers really answer. */
  private async probe(): Promise<void> {
    let ok = false;
    try {
      await this.producer.metadata({ topics: [this.config.topic], forceUpdate: true, retries: 0 });
      ok = true;
    } catch (err) {
      this.ctx.logger.debug(`${this.who}: probe: ${rootMessage(err)}`);
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
