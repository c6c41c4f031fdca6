import { readFileSync } from 'node:fs';
import { upwardJitter } from '../../core/jitter';
import type { ConnectionOptions } from 'node:tls';
import type * as Platformatic from '@platformatic/kafka';
import { requirePackage } from '../../core/packages';
import { s } from '../../schema/typed';
import type { Marked, Schema } from '../../schema/typed';

/** The client, loaded when a kafka type loads (an optional package: docs/install.md). */
export function platformatic(neededBy: string): typeof Platformatic {
  return requirePackage<typeof Platformatic>('@platformatic/kafka', neededBy);
}

/**
 * `rdkafka_options`: the librdkafka option names users of the original set,
 * mapped onto @platformatic/kafka. Every name accepted here changes what the
 * client does; any other name is refused (at publish time, through the
 * type's `validate`) with the name in the message, rather than accepted and
 * ignored. Values are strings as in librdkafka (numbers and booleans are
 * taken too and read as their text).
 */
export type RdkafkaOptions = Record<string, string | number | boolean>;

export type Side = 'onramp' | 'offramp';

export type Compression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** What the options set, ready for the client; TLS files are read only by `tlsOptions`. */
export interface KafkaSettings {
  clientId?: string;
  /** `security.protocol` is ssl or sasl_ssl */
  tls: boolean;
  /** TLS settings; `*.location` keys hold paths, read when the client is built */
  tlsFiles: Partial<Record<'ca' | 'cert' | 'key' | 'pfx' | 'crl', string>>;
  tlsInline: ConnectionOptions;
  /** `security.protocol` is sasl_plaintext or sasl_ssl */
  useSasl: boolean;
  sasl: { mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; username?: string; password?: string };
  connectTimeout: number;
  requestTimeout?: number;
  /** a failed request is tried again `retries` times, `initial` ms after the first failure, doubling up to `max` */
  retry: { retries: number; initial: number; max: number };
  metadataMaxAge?: number;
  consumer: {
    groupId?: string;
    autoCommit: boolean;
    fromBeginning: boolean;
    sessionTimeout: number;
    heartbeatInterval?: number;
    rebalanceTimeout?: number;
    maxWaitTime?: number;
    minBytes?: number;
    maxBytes: number;
    maxBytesPerPartition: number;
    readUncommitted?: boolean;
  };
  producer: {
    acks: -1 | 0 | 1;
    compression: Compression;
    /** ms to gather sends into one produce request; 0: what arrives within one turn of the event loop */
    lingerMs: number;
    /** most messages in one produce request */
    batchMessages: number;
    /** sends waiting for the broker beyond which the circuit breaker is triggered */
    queueMessages: number;
    idempotent: boolean;
    /** how long the broker may take to acknowledge (acks=all) */
    timeout?: number;
  };
}

type Target = 'both' | Side;

interface OptionRule {
  /** which side may set it: consumer options are refused on the offramp and producer options on the onramp */
  side: Target;
  apply(value: string, s: KafkaSettings, name: string): void;
}

/**
 * Defaults where eddy's differ from the client's: bounded retries (100 ms
 * doubling to 5 s, 5 times, as eddy had on kafkajs), librdkafka's session
 * timeout, and kafkajs's fetch sizes (1 MB a partition, 10 MB a fetch: the
 * client's 50 MB would let one fetch hold half a million small messages in
 * memory while the consumer is paused).
 */
export function defaultSettings(): KafkaSettings {
  return {
    tls: false,
    useSasl: false,
    sasl: { mechanism: 'PLAIN' },
    tlsFiles: {},
    tlsInline: {},
    connectTimeout: 3000,
    // the client tries each request (and the first connect) this often before giving up; the onramp then starts its stream again
    retry: { retries: 5, initial: 100, max: 5000 },
    consumer: { autoCommit: true, fromBeginning: false, sessionTimeout: 10000, maxBytes: 10 * 1024 * 1024, maxBytesPerPartition: 1024 * 1024 },
    producer: { acks: -1, compression: 'none', lingerMs: 0, batchMessages: 10000, queueMessages: 8192, idempotent: false },
  };
}

const fail: (name: string, why: string) => never = (name, why) => {
  throw new Error(`rdkafka_options.${name}: ${why}`);
};

function int(name: string, value: string, min = 0): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min) fail(name, `expected an integer ≥ ${min}, got '${value}'`);
  return n;
}

function bool(name: string, value: string): boolean {
  const v = value.toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return fail(name, `expected true or false, got '${value}'`);
}

function oneOf<T>(name: string, value: string, choices: Record<string, T>): T {
  const hit = choices[value.toLowerCase()];
  if (hit === undefined) fail(name, `expected one of ${Object.keys(choices).join(', ')}, got '${value}'`);
  return hit;
}

const compression: OptionRule = {
  side: 'both',
  apply(value, s, name) {
    s.producer.compression = oneOf(name, value, { none: 'none', gzip: 'gzip', snappy: 'snappy', lz4: 'lz4', zstd: 'zstd' } as const);
  },
};

const acks: OptionRule = {
  side: 'offramp',
  apply(value, s, name) {
    s.producer.acks = oneOf(name, value, { all: -1, '-1': -1, '0': 0, '1': 1 });
  },
};

const linger: OptionRule = { side: 'offramp', apply: (v, s, n) => void (s.producer.lingerMs = int(n, v)) };
const retries: OptionRule = { side: 'offramp', apply: (v, s, n) => void (s.retry.retries = int(n, v)) };
const metadataAge: OptionRule = { side: 'both', apply: (v, s, n) => void (s.metadataMaxAge = int(n, v, 1)) };

/**
 * The mechanisms that need only a user name and a password. The client also
 * has GSSAPI (Kerberos) and OAUTHBEARER, but both need a token or ticket
 * from somewhere (librdkafka's token refresh callback, an OIDC endpoint),
 * which eddy has no option for yet.
 */
const saslMechanism: OptionRule = {
  side: 'both',
  apply(value, s, name) {
    const mechanism = oneOf(name, value, { plain: 'PLAIN', 'scram-sha-256': 'SCRAM-SHA-256', 'scram-sha-512': 'SCRAM-SHA-512' } as const);
    s.sasl.mechanism = mechanism;
  },
};

const tlsFile = (key: keyof KafkaSettings['tlsFiles']): OptionRule => ({
  side: 'both',
  apply: (value, s) => void (s.tlsFiles[key] = value),
});

const tlsInline = (key: 'ca' | 'cert' | 'key' | 'passphrase' | 'ciphers' | 'ecdhCurve' | 'sigalgs'): OptionRule => ({
  side: 'both',
  apply: (value, s) => void (s.tlsInline[key] = value),
});

const RULES: Readonly<Record<string, OptionRule>> = {
  // ---- both sides ----
  'client.id': { side: 'both', apply: (v, s) => void (s.clientId = v) },
  'security.protocol': {
    side: 'both',
    apply(value, s, name) {
      const p = oneOf(name, value, { plaintext: [false, false], ssl: [true, false], sasl_plaintext: [false, true], sasl_ssl: [true, true] });
      [s.tls, s.useSasl] = p;
    },
  },
  'sasl.mechanisms': saslMechanism,
  'sasl.mechanism': saslMechanism,
  'sasl.username': { side: 'both', apply: (v, s) => void (s.sasl.username = v) },
  'sasl.password': { side: 'both', apply: (v, s) => void (s.sasl.password = v) },
  'ssl.ca.location': tlsFile('ca'),
  'ssl.certificate.location': tlsFile('cert'),
  'ssl.key.location': tlsFile('key'),
  'ssl.keystore.location': tlsFile('pfx'),
  'ssl.crl.location': tlsFile('crl'),
  'ssl.ca.pem': tlsInline('ca'),
  'ssl.certificate.pem': tlsInline('cert'),
  'ssl.key.pem': tlsInline('key'),
  'ssl.key.password': tlsInline('passphrase'),
  'ssl.keystore.password': tlsInline('passphrase'),
  'ssl.cipher.suites': tlsInline('ciphers'),
  'ssl.curves.list': tlsInline('ecdhCurve'),
  'ssl.sigalgs.list': tlsInline('sigalgs'),
  'enable.ssl.certificate.verification': { side: 'both', apply: (v, s, n) => void (s.tlsInline.rejectUnauthorized = bool(n, v)) },
  'ssl.endpoint.identification.algorithm': {
    side: 'both',
    apply(value, s, name) {
      // none: the certificate must still be trusted, only the host name check is off
      if (oneOf(name, value, { none: true, https: false })) s.tlsInline.checkServerIdentity = () => undefined;
      else delete s.tlsInline.checkServerIdentity;
    },
  },
  'socket.timeout.ms': { side: 'both', apply: (v, s, n) => void (s.requestTimeout = int(n, v, 1)) },
  'socket.connection.setup.timeout.ms': { side: 'both', apply: (v, s, n) => void (s.connectTimeout = int(n, v, 1)) },
  'reconnect.backoff.ms': { side: 'both', apply: (v, s, n) => void (s.retry.initial = int(n, v, 1)) },
  'reconnect.backoff.max.ms': { side: 'both', apply: (v, s, n) => void (s.retry.max = int(n, v, 1)) },
  'topic.metadata.refresh.interval.ms': metadataAge,
  'metadata.max.age.ms': metadataAge,
  // librdkafka takes the producer's compression on either side (a consumer ignores it); so does eddy, checked
  'compression.codec': compression,
  'compression.type': compression,

  // ---- the consumer (onramp) ----
  'group.id': { side: 'onramp', apply: (v, s) => void (s.consumer.groupId = v) },
  'enable.auto.commit': { side: 'onramp', apply: (v, s, n) => void (s.consumer.autoCommit = bool(n, v)) },
  'auto.offset.reset': {
    side: 'onramp',
    apply(value, s, name) {
      s.consumer.fromBeginning = oneOf(name, value, { smallest: true, earliest: true, beginning: true, largest: false, latest: false, end: false });
    },
  },
  'session.timeout.ms': { side: 'onramp', apply: (v, s, n) => void (s.consumer.sessionTimeout = int(n, v, 1)) },
  'heartbeat.interval.ms': { side: 'onramp', apply: (v, s, n) => void (s.consumer.heartbeatInterval = int(n, v, 1)) },
  'max.poll.interval.ms': { side: 'onramp', apply: (v, s, n) => void (s.consumer.rebalanceTimeout = int(n, v, 1)) },
  'fetch.wait.max.ms': { side: 'onramp', apply: (v, s, n) => void (s.consumer.maxWaitTime = int(n, v, 1)) },
  'fetch.min.bytes': { side: 'onramp', apply: (v, s, n) => void (s.consumer.minBytes = int(n, v, 1)) },
  'fetch.max.bytes': { side: 'onramp', apply: (v, s, n) => void (s.consumer.maxBytes = int(n, v, 1)) },
  'max.partition.fetch.bytes': { side: 'onramp', apply: (v, s, n) => void (s.consumer.maxBytesPerPartition = int(n, v, 1)) },
  'isolation.level': {
    side: 'onramp',
    apply: (v, s, n) => void (s.consumer.readUncommitted = oneOf(n, v, { read_committed: false, read_uncommitted: true })),
  },

  // ---- the producer (offramp) ----
  acks,
  'request.required.acks': acks,
  'linger.ms': linger,
  'queue.buffering.max.ms': linger,
  'batch.num.messages': { side: 'offramp', apply: (v, s, n) => void (s.producer.batchMessages = int(n, v, 1)) },
  'queue.buffering.max.messages': { side: 'offramp', apply: (v, s, n) => void (s.producer.queueMessages = int(n, v, 1)) },
  'message.send.max.retries': retries,
  retries,
  'retry.backoff.ms': { side: 'offramp', apply: (v, s, n) => void (s.retry.initial = int(n, v, 1)) },
  'enable.idempotence': { side: 'offramp', apply: (v, s, n) => void (s.producer.idempotent = bool(n, v)) },
  'request.timeout.ms': { side: 'offramp', apply: (v, s, n) => void (s.producer.timeout = int(n, v, 1)) },
  partitioner: {
    side: 'offramp',
    // the offramp partitions like the Java client: murmur2 of the key, round robin when there is none
    apply: (v, _s, n) => void oneOf(n, v, { murmur2_random: true }),
  },
};

/** The names each side takes, for error messages and the docs. */
export function supportedOptions(side: Side): string[] {
  return Object.keys(RULES)
    .filter((name) => RULES[name].side === 'both' || RULES[name].side === side)
    .sort();
}

/**
 * Reads `rdkafka_options` for one side; throws `rdkafka_options.<name>: why`
 * for a name this side does not take or a value it cannot use.
 */
export function kafkaSettings(side: Side, options: RdkafkaOptions = {}): KafkaSettings {
  const s = defaultSettings();
  for (const [name, raw] of Object.entries(options)) {
    // a name from the user's config: an own key only (not `toString` from the prototype)
    const rule = Object.hasOwn(RULES, name) ? RULES[name] : undefined;
    if (!rule) {
      let why = 'not an option eddy maps onto its kafka client (@platformatic/kafka)';
      if (name.startsWith('sasl.'))
        why = 'not available: eddy supports sasl.mechanisms PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 with sasl.username and sasl.password';
      else if (name.startsWith('ssl.')) why = "not available with Node's TLS";
      fail(name, `${why}; the ${side} takes ${supportedOptions(side).join(', ')}`);
    }
    if (rule.side !== 'both' && rule.side !== side) {
      fail(name, `a ${rule.side === 'onramp' ? 'consumer (onramp)' : 'producer (offramp)'} option; the kafka ${side} does not use it`);
    }
    rule.apply(String(raw), s, name);
  }
  const saslSet = Object.keys(options).filter((name) => name.startsWith('sasl.'));
  if (s.useSasl && (s.sasl.username === undefined || s.sasl.password === undefined)) {
    fail('sasl.username', 'security.protocol asks for SASL: set both sasl.username and sasl.password');
  }
  if (!s.useSasl && saslSet.length > 0) {
    fail(saslSet[0], 'SASL is used only with security.protocol sasl_plaintext or sasl_ssl');
  }
  const tlsSet = Object.keys(options).filter((name) => name.startsWith('ssl.') || name === 'enable.ssl.certificate.verification');
  if (!s.tls && tlsSet.length > 0) fail(tlsSet[0], 'TLS is used only with security.protocol ssl or sasl_ssl');
  const c = s.consumer;
  if (c.heartbeatInterval !== undefined && c.heartbeatInterval >= c.sessionTimeout) {
    fail('heartbeat.interval.ms', `must be below session.timeout.ms (${c.sessionTimeout})`);
  }
  if (s.producer.idempotent && s.producer.acks !== -1) fail('enable.idempotence', 'needs acks=all');
  return s;
}

/** What both clients take: brokers, client id, timeouts, retries, TLS and SASL. TLS files are read here (a missing file fails the activation, naming the option). */
export function baseOptions(s: KafkaSettings, brokers: string[], clientId: string): Platformatic.BaseOptions {
  const { retries, initial, max } = s.retry;
  const options: Platformatic.BaseOptions = {
    bootstrapBrokers: brokers,
    clientId: s.clientId ?? clientId,
    connectTimeout: s.connectTimeout,
    retries,
    // the client waits a fixed delay (1 s) by default; eddy's back-off starts small and doubles, bounded (attempt is 1 at the first retry)
    retryDelay: (_client, _operation, attempt) => upwardJitter(Math.min(max, initial * 2 ** (attempt - 1))),
    // as kafkajs and librdkafka did: a topic the broker creates on first use (auto.create.topics.enable) is created
    autocreateTopics: true,
  };
  if (s.requestTimeout !== undefined) options.requestTimeout = s.requestTimeout;
  if (s.metadataMaxAge !== undefined) options.metadataMaxAge = s.metadataMaxAge;
  if (s.tls) options.tls = tlsOptions(s);
  if (s.useSasl) options.sasl = { mechanism: s.sasl.mechanism, username: s.sasl.username, password: s.sasl.password };
  return options;
}

/**
 * The producer's options: the offramp's, and what a transactional producer
 * (exactly-once, the next step) adds: a `transactionalId` makes
 * `beginTransaction` usable (docs/connectors/kafka.md, "Transactions").
 */
export function producerOptions(
  s: KafkaSettings,
  brokers: string[],
  clientId: string,
  extra: { partitioner?: Platformatic.ProducerOptions<Buffer, Buffer, Buffer, Buffer>['partitioner']; transactionalId?: string } = {},
): Platformatic.ProducerOptions<Buffer, Buffer, Buffer, Buffer> {
  const p = s.producer;
  const options: Platformatic.ProducerOptions<Buffer, Buffer, Buffer, Buffer> = {
    ...baseOptions(s, brokers, clientId),
    acks: p.acks,
    compression: p.compression,
    // a transactional producer is idempotent (the broker requires it)
    idempotent: p.idempotent || extra.transactionalId !== undefined,
  };
  // the produce request's own timeout: how long the broker may take to acknowledge
  if (p.timeout !== undefined) options.timeout = p.timeout;
  if (extra.partitioner) options.partitioner = extra.partitioner;
  if (extra.transactionalId !== undefined) options.transactionalId = extra.transactionalId;
  return options;
}

const FILE_OPTION: Record<keyof KafkaSettings['tlsFiles'], string> = {
  ca: 'ssl.ca.location',
  cert: 'ssl.certificate.location',
  key: 'ssl.key.location',
  pfx: 'ssl.keystore.location',
  crl: 'ssl.crl.location',
};

function tlsOptions(s: KafkaSettings): ConnectionOptions {
  const options: ConnectionOptions = { ...s.tlsInline };
  for (const [key, path] of Object.entries(s.tlsFiles) as [keyof KafkaSettings['tlsFiles'], string][]) {
    try {
      options[key] = readFileSync(path);
    } catch (err) {
      fail(FILE_OPTION[key], `cannot read ${path}: ${(err as Error).message}`);
    }
  }
  return options;
}

/** `host:port` as the client wants it: the port defaults to 9092 as in librdkafka. */
export function brokerAddress(broker: string): string {
  const b = broker.trim();
  if (b.startsWith('[')) return b.includes(']:') ? b : `${b}:9092`;
  const colons = (b.match(/:/g) ?? []).length;
  return colons === 1 ? b : colons === 0 ? `${b}:9092` : `[${b}]:9092`;
}

interface ErrorLike {
  name?: string;
  code?: string;
  message?: string;
  apiId?: string;
  /** set by the client on a broker's answer: whether the same request may succeed later (a coordinator still loading) */
  canRetry?: boolean;
  cause?: unknown;
  errors?: unknown[];
}

/** The error and what it wraps: its cause, and the errors of a MultipleErrors (one per attempt or broker), depth first. */
function* chain(err: unknown, depth = 0): Generator<ErrorLike> {
  if (!err || typeof err !== 'object' || depth > 6) return;
  const e = err as ErrorLike;
  yield e;
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* chain(inner, depth + 1);
  yield* chain(e.cause, depth + 1);
}

/** A client error (or one it wraps) that says no broker could be reached or answered in time. */
export function isConnectionError(err: unknown): boolean {
  for (const e of chain(err)) {
    // NetworkError and TimeoutError both carry PLT_KFK_NETWORK; a socket error of Node's beneath them
    if (e.code === 'PLT_KFK_NETWORK' || e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET' || e.code === 'EPIPE' || e.code === 'ETIMEDOUT') return true;
  }
  return false;
}

/**
 * A failure that waiting may cure: no broker reached, or brokers that
 * answered an error the client marks retriable (a coordinator still loading
 * its groups after a restart, a leader being elected, a rebalance under way)
 * and kept answering it through the client's own retries. A restarted broker
 * under load answers COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR for
 * seconds; a source that gave up on it would stay down after the brokers came
 * back. An answer that refuses for good (authorisation, a group whose members
 * speak another protocol) is not transient: one of those anywhere in the
 * chain decides.
 */
export function isTransientError(err: unknown): boolean {
  let retriable = false;
  for (const e of chain(err)) {
    if (e.apiId && e.canRetry === false) return false;
    if (e.apiId && e.canRetry === true) retriable = true;
  }
  return retriable || isConnectionError(err);
}

/**
 * What actually went wrong, for logs and errors: the innermost message of
 * the last attempt (the client wraps retries in "… failed after N
 * attempts"), with the broker's error name when the broker answered one.
 */
export function rootMessage(err: unknown): string {
  let message = (err as ErrorLike | undefined)?.message ?? String(err);
  for (const e of chain(err)) {
    if (!e.message) continue;
    message = e.apiId ? `${e.apiId}: ${e.message}` : e.message;
  }
  return message;
}

/** An option's value as written: a string as in librdkafka, or a number or boolean read as its text (a list of types, which no builder makes: typed by hand). */
const OPTION_VALUE: Schema<string | number | boolean> = { type: ['string', 'number', 'boolean'] };

/** The rdkafka_options that hold secrets, marked so that eddy shows them as *** (schema/secrets.ts). */
export const SECRET_RDKAFKA_OPTIONS: Record<string, Schema<string | number | boolean>> = Object.fromEntries(
  ['sasl.password', 'ssl.key.password', 'ssl.keystore.password', 'ssl.key.pem'].map((name) => [
    name,
    { ...OPTION_VALUE, writeOnly: true, description: 'a secret: eddy shows it as "***" (docs/security.md)' },
  ]),
);

/** The rdkafka_options that name files eddy reads (schema/paths.ts): confined by `--allow-path` like any path field. */
const FILE_RDKAFKA_OPTIONS: Record<string, Schema<string | number | boolean>> = Object.fromEntries(
  Object.values(FILE_OPTION).map((name) => [name, { ...OPTION_VALUE, path: 'read', description: 'a file eddy reads (PEM; the keystore PKCS#12)' }]),
);

/**
 * Both sides' `rdkafka_options`: any name with a string, number or boolean
 * value (the names are checked by `kafkaSettings`, which says which it
 * takes), the secret ones listed so that they are shown as ***, and those
 * naming files so that they are confined as paths.
 */
export function rdkafkaOptions(description: string): Schema<RdkafkaOptions> & Marked<{ default: RdkafkaOptions }> {
  return { ...s.record(OPTION_VALUE, { default: {}, description }), properties: { ...SECRET_RDKAFKA_OPTIONS, ...FILE_RDKAFKA_OPTIONS } };
}

type ProducerPartitioner = NonNullable<Platformatic.ProducerOptions<Buffer, Buffer, Buffer, Buffer>['partitioner']>;

/**
 * The Java client's partition of a keyed message (murmur2 of the key,
 * `& 0x7fffffff`, modulo the partition count; the client's own default,
 * `murmur2 >>> 0`, differs for a negative hash when the partition count is
 * not a power of two), and round robin without a key: the kafka offramp's
 * partitioner, also in a transactional source's producer.
 */
export function javaPartitioner(): ProducerPartitioner {
  const { compatibilityPartitioner } = platformatic('the kafka partitioner');
  let roundRobin = 0;
  return (message, key) => {
    if (key !== undefined) return compatibilityPartitioner(message, key);
    // the client takes it modulo the partition count
    roundRobin = (roundRobin + 1) & 0x7fffffff;
    return roundRobin;
  };
}
