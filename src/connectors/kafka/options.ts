import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type * as KafkaJs from 'kafkajs';
import type { KafkaConfig, LogEntry, RetryOptions, SASLOptions } from 'kafkajs';
import { requirePackage } from '../../core/packages';
import type { Logger } from '../../core/logger';
import { s } from '../../schema/typed';
import type { Marked, Schema } from '../../schema/typed';

const { CompressionTypes, logLevel } = requirePackage<typeof KafkaJs>('kafkajs', 'the kafka connector');

/**
 * `rdkafka_options`: the librdkafka option names users of the original set,
 * mapped onto kafkajs. Every name accepted here changes what the client
 * does; any other name is refused (at publish time, through the type's
 * `validate`) with the name in the message, rather than accepted and
 * ignored. Values are strings as in librdkafka (numbers and booleans are
 * taken too and read as their text).
 */
export type RdkafkaOptions = Record<string, string | number | boolean>;

export type Side = 'onramp' | 'offramp';

/** What the options set, ready for kafkajs; TLS files are read only by `tlsOptions`. */
export interface KafkaSettings {
  clientId?: string;
  /** `security.protocol` is ssl or sasl_ssl */
  tls: boolean;
  /** TLS settings; `*.location` keys hold paths, read when the client is built */
  tlsFiles: Partial<Record<'ca' | 'cert' | 'key' | 'pfx' | 'crl', string>>;
  tlsInline: ConnectionOptions;
  /** `security.protocol` is sasl_plaintext or sasl_ssl */
  useSasl: boolean;
  sasl: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username?: string; password?: string };
  connectionTimeout: number;
  requestTimeout?: number;
  retry: RetryOptions;
  metadataMaxAge?: number;
  consumer: {
    groupId?: string;
    autoCommit: boolean;
    fromBeginning: boolean;
    sessionTimeout: number;
    heartbeatInterval?: number;
    rebalanceTimeout?: number;
    maxWaitTimeInMs?: number;
    minBytes?: number;
    maxBytes?: number;
    maxBytesPerPartition?: number;
    readUncommitted?: boolean;
  };
  producer: {
    acks: -1 | 0 | 1;
    compression: KafkaJs.CompressionTypes;
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

/** Defaults where eddy's differ from kafkajs's: bounded reconnects (100 ms doubling to 5 s) and librdkafka's session timeout. */
export function defaultSettings(): KafkaSettings {
  return {
    tls: false,
    useSasl: false,
    sasl: { mechanism: 'plain' },
    tlsFiles: {},
    tlsInline: {},
    connectionTimeout: 3000,
    // kafkajs retries each request (and the first connect) this often before giving up; a consumer then restarts itself
    retry: { initialRetryTime: 100, maxRetryTime: 5000, retries: 5 },
    consumer: { autoCommit: true, fromBeginning: false, sessionTimeout: 10000 },
    producer: { acks: -1, compression: CompressionTypes.None, lingerMs: 0, batchMessages: 10000, queueMessages: 2048, idempotent: false },
  };
}

const fail = (name: string, why: string): never => {
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
    const codec = value.toLowerCase();
    if (codec === 'snappy' || codec === 'lz4' || codec === 'zstd') {
      fail(name, `${codec} is not built into eddy's kafka client (kafkajs); use gzip or none`);
    }
    s.producer.compression = oneOf(name, value, { none: CompressionTypes.None, gzip: CompressionTypes.GZIP });
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

/** Mechanisms kafkajs implements; GSSAPI (Kerberos) and OAUTHBEARER need code eddy does not have. */
const saslMechanism: OptionRule = {
  side: 'both',
  apply(value, s, name) {
    const mechanism = oneOf(name, value, { plain: 'plain', 'scram-sha-256': 'scram-sha-256', 'scram-sha-512': 'scram-sha-512' } as const);
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
  'socket.connection.setup.timeout.ms': { side: 'both', apply: (v, s, n) => void (s.connectionTimeout = int(n, v, 1)) },
  'reconnect.backoff.ms': { side: 'both', apply: (v, s, n) => void (s.retry.initialRetryTime = int(n, v, 1)) },
  'reconnect.backoff.max.ms': { side: 'both', apply: (v, s, n) => void (s.retry.maxRetryTime = int(n, v, 1)) },
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
  'fetch.wait.max.ms': { side: 'onramp', apply: (v, s, n) => void (s.consumer.maxWaitTimeInMs = int(n, v, 1)) },
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
  'retry.backoff.ms': { side: 'offramp', apply: (v, s, n) => void (s.retry.initialRetryTime = int(n, v, 1)) },
  'enable.idempotence': { side: 'offramp', apply: (v, s, n) => void (s.producer.idempotent = bool(n, v)) },
  'request.timeout.ms': { side: 'offramp', apply: (v, s, n) => void (s.producer.timeout = int(n, v, 1)) },
  partitioner: {
    side: 'offramp',
    // kafkajs partitions like the Java client: murmur2 of the key, spread when there is none
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
    const rule = RULES[name];
    if (!rule) {
      let why = 'not an option eddy maps onto its kafka client (kafkajs)';
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

/** The kafkajs client config for these settings: TLS files are read here (a missing file fails the activation, naming the option). */
export function clientConfig(s: KafkaSettings, brokers: string[], clientId: string, logger: Logger, who: string): KafkaConfig {
  const config: KafkaConfig = {
    brokers,
    clientId: s.clientId ?? clientId,
    connectionTimeout: s.connectionTimeout,
    retry: s.retry,
    logLevel: logLevel.INFO,
    // kafkajs narrates every retry at error level; eddy logs outages itself, so the client's own lines go to debug
    logCreator: () => (entry: LogEntry) => logger.debug(`${who}: kafkajs ${entry.namespace}: ${entry.log.message}`),
  };
  if (s.requestTimeout !== undefined) config.requestTimeout = s.requestTimeout;
  if (s.tls) config.ssl = tlsOptions(s);
  if (s.useSasl) config.sasl = s.sasl as SASLOptions;
  return config;
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

/** `host:port` as kafkajs wants it: the port defaults to 9092 as in librdkafka. */
export function brokerAddress(broker: string): string {
  const b = broker.trim();
  if (b.startsWith('[')) return b.includes(']:') ? b : `${b}:9092`;
  const colons = (b.match(/:/g) ?? []).length;
  return colons === 1 ? b : colons === 0 ? `${b}:9092` : `[${b}]:9092`;
}

/** A kafkajs error (or its cause) that says no broker could be reached or answered in time. */
export function isConnectionError(err: unknown): boolean {
  for (let e = err as { name?: string; cause?: unknown; originalError?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (
      e.name === 'KafkaJSConnectionError' ||
      e.name === 'KafkaJSConnectionClosedError' ||
      e.name === 'KafkaJSRequestTimeoutError' ||
      e.name === 'KafkaJSBrokerNotFound' ||
      e.name === 'KafkaJSNoBrokerAvailableError'
    ) {
      return true;
    }
    e = (e.cause ?? e.originalError) as typeof e;
  }
  return false;
}

/** The innermost message of a kafkajs error: what actually went wrong. */
export function rootMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  let message = e?.message ?? String(err);
  for (let depth = 0; e && depth < 5; depth++) {
    if (e.message) message = e.message;
    e = e.cause as typeof e;
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

/**
 * Both sides' `rdkafka_options`: any name with a string, number or boolean
 * value (the names are checked by `kafkaSettings`, which says which it
 * takes), the secret ones listed so that they are shown as ***.
 */
export function rdkafkaOptions(description: string): Schema<RdkafkaOptions> & Marked<{ default: RdkafkaOptions }> {
  return { ...s.record(OPTION_VALUE, { default: {}, description }), properties: SECRET_RDKAFKA_OPTIONS };
}
