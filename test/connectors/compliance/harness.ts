/**
 * How the compliance suite drives each connector type: per type name and
 * side, a function that prepares a config (temp files, free loopback ports)
 * and the peer that drives it from the test process: one bad, then one good
 * event. The type itself runs in a child process (fixtures/ramp-child.ts),
 * so the peers here stay connected while the child checks that its shutdown
 * released everything: a connector that leaves an accepted connection or a
 * client socket open is caught, not rescued by the peer hanging up.
 *
 * Entries for types that are not registered are simply not reached; nothing
 * here imports a connector module, so the suite compiles without them.
 */
import { createServer as createHttpServer, request, Agent, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { Client } from 'pg';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { status as grpcStatus } from '@grpc/grpc-js';
import { serviceAddress, type ServiceName } from '../../helpers/services';
import type { ChildStatus, RampParts } from './protocol';
import { freePort } from '../net-helpers';
import { createServedTopic } from '../kafka/topics';
import { amqpAddr, TestClient, unique } from '../amqp/helpers';
import { StandIn, TOKEN as CHAT_TOKEN } from '../chat/stand-in';
import { connect as natsConnect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { TestClient as PubsubClient, PROJECT as PUBSUB_PROJECT } from '../pubsub/helpers';
import { logServer, makeCert } from '../logvendor/helpers';
import * as otel from '../otel/helpers';

/** What a harness can do with the child running the type. */
export interface ChildIo {
  /** offramps: one event into the pipeline that feeds the offramp */
  send(data: unknown, meta?: Record<string, unknown>): Promise<void>;
  /** writes to the child's standard input (it stays open until the child has exited) */
  stdin(text: string): void;
  /** the child's standard output and error so far */
  stdout(): string;
  stderr(): string;
  status(): Promise<ChildStatus>;
}

export interface Prepared {
  /** the artefact's config, codec and processors */
  ramp: RampParts;
  /** sends one bad, then one good event (an onramp's input may already be in place: a file) */
  drive(io: ChildIo): Promise<void>;
  /** the good event arrived where it was sent (an offramp's peer got it); counters alone when absent */
  arrived?(io: ChildIo, status: ChildStatus): boolean;
  /** closes the peers; called after the child has gone */
  close(): Promise<void>;
}

/**
 * A config whose instance cannot open what `create` must open (its port is
 * taken, its file is missing): the activation must fail with a 400 naming
 * the artefact, and leave nothing behind.
 */
export interface Unopenable {
  /** what cannot be opened, for the test's name */
  what: string;
  prepare(dir: string): Promise<{ ramp: RampParts; close(): Promise<void> }>;
}

export interface OnrampHarness {
  prepare(dir: string): Promise<Prepared>;
  unopenable?: Unopenable;
  /** set (with the reason) for sources of structured values: nothing to decode, so nothing can be bad */
  noBadInput?: string;
  /** set (with the reason) for sources that read no bytes */
  noBytes?: string;
}

export interface OfframpHarness {
  prepare(dir: string): Promise<Prepared>;
  unopenable?: Unopenable;
  /** set (with the reason) for sinks that encode their requests themselves: the machinery encodes no bytes */
  noBytes?: string;
}

export interface Harness {
  /** the real server of `scripts/services` it runs against: skipped locally when it is down, a failure under CI */
  service?: ServiceName;
  onramp?: OnrampHarness;
  offramp?: OfframpHarness;
}

/**
 * Types the suite cannot drive, by `<side>:<type>`, with the reason. Each is
 * reported as a pending test carrying the reason; a type neither here nor in
 * `harnesses` fails the suite.
 */
export const notDrivable: Readonly<Record<string, string>> = {};

// ---- input used by many harnesses ----

/** An onramp's bad then good input, one per line: the bad one must not stop the stream. */
const BAD_THEN_GOOD_LINES = 'not json\n{"n":1}\n';
const GOOD_JSON = '{"n":1}';
const BAD_JSON = 'not json';

/**
 * Offramps that accept every payload (files, streams, sockets) are driven
 * with the statsd codec: it cannot encode a plain string, so the machinery
 * counts that event as an error, and the good metric arrives as `eddy:1|c`.
 */
const METRIC = { metric: 'eddy', type: 'c', value: 1 };
const METRIC_LINE = 'eddy:1|c';
const UNENCODABLE = 'not a metric';

async function badThenGoodMetric(io: ChildIo): Promise<void> {
  await io.send(UNENCODABLE);
  await io.send(METRIC);
}

const nothingToClose = async () => undefined;

function writeSource(dir: string, name: string, text = BAD_THEN_GOOD_LINES): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** A source file that does not exist. */
const missingSource = (key: string, extra: Record<string, unknown> = {}): Unopenable => ({
  what: 'its source file (missing)',
  prepare: async (dir) => ({ ramp: { config: { [key]: join(dir, 'missing', 'nothing.json'), ...extra } }, close: nothingToClose }),
});

/** A TCP port on 127.0.0.1 that this process holds while the child tries to listen on it. */
const tcpPortInUse = (config: (port: number) => Record<string, unknown>): Unopenable => ({
  what: 'its port (in use)',
  async prepare() {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    return { ramp: { config: config(port) }, close: () => new Promise<void>((r) => holder.close(() => r())) };
  },
});

// ---- loopback helpers ----

export const freeTcpPort = () => freePort('tcp');

export const freeUdpPort = () => freePort('udp');

/** A TCP server that keeps what it receives; `close` drops its connections too. */
async function tcpPeer(): Promise<{ port: number; received(): string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let text = '';
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    received: () => text,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

async function udpPeer(): Promise<{ port: number; received(): string[]; close: () => Promise<void> }> {
  const datagrams: string[] = [];
  const socket: UdpSocket = createSocket('udp4');
  socket.on('message', (m) => datagrams.push(m.toString('utf8')));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    port: socket.address().port,
    received: () => datagrams,
    close: () => new Promise<void>((r) => socket.close(r)),
  };
}

async function wsPeer(): Promise<{ port: number; received(): string[]; close: () => Promise<void> }> {
  const messages: string[] = [];
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  server.on('connection', (ws) => {
    ws.on('message', (data) =>
      messages.push(Buffer.isBuffer(data) ? data.toString('utf8') : (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8')),
    );
    ws.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as { port: number }).port,
    received: () => messages,
    close: async () => {
      for (const client of server.clients) client.terminate();
      await new Promise((r) => server.close(r));
    },
  };
}

/** An HTTP server that answers 500 to bodies containing `refuse`, 200 to the rest. */
async function httpPeer(): Promise<{ port: number; received(): string[]; close: () => Promise<void> }> {
  const bodies: string[] = [];
  const server: HttpServer = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    req.on('end', () => {
      bodies.push(body);
      const refuse = body.includes('refuse');
      res.writeHead(refuse ? 500 : 200, { 'content-type': 'application/json' });
      res.end(refuse ? '{"error":"refused"}' : '{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    received: () => bodies,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Two keep-alive POSTs to the child's HTTP onramp over one agent, kept open until `close`. */
function httpPost(agent: Agent, port: number, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/', method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res: IncomingMessage) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A topic of its own on the kafka service, a producer into it and a reader of everything in it. */
async function kafkaPeer(
  partitions = 1,
): Promise<{ broker: string; topic: string; produce(values: string[]): Promise<void>; received(): string[]; close: () => Promise<void> }> {
  const { host, port } = serviceAddress('kafka');
  const broker = `${host}:${port}`;
  const topic = `compliance-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const kafka = new Kafka({ brokers: [broker], clientId: 'eddy-compliance', logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createServedTopic(admin, { topic, numPartitions: partitions, replicationFactor: 1 });
  } finally {
    await admin.disconnect();
  }
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const consumer = kafka.consumer({ groupId: `${topic}-reader`, maxWaitTimeInMs: 100 });
  const values: string[] = [];
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value?.toString('utf8') ?? '') });
  return {
    broker,
    topic,
    produce: async (list) => {
      await producer.send({ topic, messages: list.map((value) => ({ value })) });
    },
    received: () => values,
    close: async () => {
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}

/** A kafka config whose brokers do not answer (a loopback port nothing listens on). */
const kafkaUnreachable = (config: (broker: string) => Record<string, unknown>): Unopenable => ({
  what: 'its brokers (nothing answers)',
  prepare: async () => ({ ramp: { config: config(`127.0.0.1:${await freeTcpPort()}`) }, close: nothingToClose }),
});

// ---- the table ----

/**
 * A table of its own in the PostgreSQL of `scripts/services start postgres`,
 * a client for the harness's statements, and the connection keys of the
 * postgres types' configs.
 */
async function postgresTable(columns: string): Promise<{ table: string; client: Client; connection: Record<string, unknown>; close: () => Promise<void> }> {
  const { host, port } = serviceAddress('postgres');
  const client = new Client({ host, port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`postgres is not running on ${host}:${port} (${(err as Error).message}): start it with scripts/services start postgres`);
  }
  const table = `eddy_compliance_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
  await client.query(`CREATE TABLE ${table} (${columns})`);
  return {
    table,
    client,
    connection: { host, port, user: 'postgres', password: '', dbname: 'postgres' },
    close: async () => {
      await client.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      await client.end();
    },
  };
}

/** A loopback port where no PostgreSQL listens: an activation must fail with a 400. */
const noPostgres = (config: Record<string, unknown>): Unopenable => ({
  what: 'its database server (nothing listens on the port)',
  prepare: async () => ({
    ramp: { config: { host: '127.0.0.1', port: await freeTcpPort(), user: 'postgres', dbname: 'postgres', ...config } },
    close: nothingToClose,
  }),
});

/** A client of the rabbitmq that scripts/services runs, or an error that says how to start it. */
async function rabbitmq(): Promise<{ client: TestClient; addr: string }> {
  const address = serviceAddress('rabbitmq');
  const client = await TestClient.open(address).catch((err: unknown) => {
    throw new Error(`rabbitmq is not running on ${address.host}:${address.port} (${(err as Error).message}): start it with scripts/services start rabbitmq`);
  });
  return { client, addr: amqpAddr(address) };
}

/** An amqp address where nothing listens. */
const amqpUnreachable = (config: (addr: string) => Record<string, unknown>): Unopenable => ({
  what: 'its server (nothing listens at amqp_addr)',
  prepare: async () => ({ ramp: { config: config(`amqp://guest:guest@127.0.0.1:${await freeTcpPort()}/%2f`) }, close: nothingToClose }),
});

/** The nats service of scripts/services (EDDY_NATS_HOST / EDDY_NATS_PORT override it). */
function natsHost(): string {
  const { host, port } = serviceAddress('nats');
  return `${host}:${port}`;
}

/** The suite's own NATS connection (publisher, subscriber, stream admin); a missing server names the command that starts it. */
async function natsPeer(): Promise<NatsConnection> {
  try {
    return await natsConnect({ servers: natsHost(), name: 'eddy-compliance-peer' });
  } catch (err) {
    throw new Error(`nats is not running on ${natsHost()} (scripts/services start nats): ${(err as Error).message}`);
  }
}

/** Harnesses by type name. */
export const harnesses: Readonly<Record<string, Harness>> = {
  blaster: {
    onramp: {
      unopenable: missingSource('source', { iters: 1 }),
      async prepare(dir) {
        // two rounds of the two lines: two bad, two good
        return { ramp: { config: { source: writeSource(dir, 'blaster.json'), iters: 4 } }, drive: nothingToClose, close: nothingToClose };
      },
    },
  },

  cb: {
    onramp: {
      unopenable: missingSource('source'),
      async prepare(dir) {
        // the blackhole acks every event, so the cb onramp finishes (and asks for exit 0, which the child only records)
        return { ramp: { config: { source: writeSource(dir, 'cb.json'), timeout: 2000 } }, drive: nothingToClose, close: nothingToClose };
      },
    },
    offramp: {
      async prepare() {
        return {
          ramp: { codec: 'statsd', config: {} },
          drive: async (io) => {
            await io.send(UNENCODABLE, { cb: 'ack' });
            await io.send(METRIC, { cb: 'ack' });
          },
          close: nothingToClose,
        };
      },
    },
  },

  file: {
    onramp: {
      unopenable: missingSource('source'),
      async prepare(dir) {
        return { ramp: { config: { source: writeSource(dir, 'in.json') } }, drive: nothingToClose, close: nothingToClose };
      },
    },
    offramp: {
      unopenable: {
        what: 'its file (in a missing directory)',
        prepare: async (dir) => ({ ramp: { config: { file: join(dir, 'missing', 'out.txt') } }, close: nothingToClose }),
      },
      async prepare(dir) {
        const file = join(dir, 'out.txt');
        return {
          ramp: { codec: 'statsd', config: { file } },
          drive: badThenGoodMetric,
          arrived: () => readFileSync(file, 'utf8').split('\n').includes(METRIC_LINE),
          close: nothingToClose,
        };
      },
    },
  },

  metronome: {
    onramp: {
      noBadInput: 'ticks are structured values, never decoded',
      noBytes: 'ticks are structured values; no bytes are read',
      async prepare() {
        return { ramp: { config: { interval: 10 } }, drive: nothingToClose, close: nothingToClose };
      },
    },
  },

  stdin: {
    onramp: {
      async prepare() {
        return {
          ramp: { codec: 'json', preprocessors: ['lines'], config: {} },
          // the child's stdin is a pipe from this process, kept open until the child has exited
          drive: async (io) => io.stdin(BAD_THEN_GOOD_LINES),
          close: nothingToClose,
        };
      },
    },
  },

  blackhole: {
    offramp: {
      async prepare() {
        return {
          ramp: { codec: 'statsd', config: { warmup_secs: 0, stop_after_secs: 0, significant_figures: 2 } },
          drive: badThenGoodMetric,
          close: nothingToClose,
        };
      },
    },
  },

  debug: {
    offramp: {
      async prepare() {
        return { ramp: { codec: 'statsd', config: {} }, drive: badThenGoodMetric, close: nothingToClose };
      },
    },
  },

  exit: {
    offramp: {
      async prepare() {
        return {
          ramp: { config: {} },
          drive: async (io) => {
            await io.send({ exit: 'soon' }); // refused by the sink: not an integer
            await io.send({ exit: 0 });
          },
          // the child records the exit request instead of exiting
          arrived: (_io, status) => status.exits.includes(0),
          close: nothingToClose,
        };
      },
    },
  },

  stdout: {
    offramp: {
      async prepare() {
        return {
          ramp: { codec: 'statsd', config: { prefix: 'compliance> ' } },
          drive: badThenGoodMetric,
          arrived: (io) => io.stdout().split('\n').includes(`compliance> ${METRIC_LINE}`),
          close: nothingToClose,
        };
      },
    },
  },

  stderr: {
    offramp: {
      async prepare() {
        return {
          ramp: { codec: 'statsd', config: { prefix: 'compliance> ' } },
          drive: badThenGoodMetric,
          arrived: (io) => io.stderr().split('\n').includes(`compliance> ${METRIC_LINE}`),
          close: nothingToClose,
        };
      },
    },
  },

  // ---- network types (spec config keys); reached once the types are registered ----

  tcp: {
    onramp: {
      unopenable: tcpPortInUse((port) => ({ host: '127.0.0.1', port })),
      async prepare() {
        const port = await freeTcpPort();
        let client: Socket | undefined;
        return {
          ramp: { codec: 'json', preprocessors: ['lines'], config: { host: '127.0.0.1', port } },
          drive: async () => {
            const socket = connect(port, '127.0.0.1');
            socket.on('error', () => undefined); // the child closes this connection on shutdown
            client = socket;
            await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
            socket.write(BAD_THEN_GOOD_LINES);
          },
          close: async () => void client?.destroy(),
        };
      },
    },
    offramp: {
      async prepare() {
        const peer = await tcpPeer();
        return {
          ramp: { codec: 'statsd', postprocessors: ['lines'], config: { host: '127.0.0.1', port: peer.port } },
          drive: badThenGoodMetric,
          arrived: () => peer.received().includes(METRIC_LINE),
          close: peer.close,
        };
      },
    },
  },

  udp: {
    onramp: {
      unopenable: {
        what: 'its port (in use)',
        async prepare() {
          const holder = createSocket('udp4');
          await new Promise<void>((resolve) => holder.bind(0, '127.0.0.1', resolve));
          const { port } = holder.address();
          return { ramp: { config: { host: '127.0.0.1', port } }, close: () => new Promise<void>((r) => holder.close(r)) };
        },
      },
      async prepare() {
        const port = await freeUdpPort();
        return {
          ramp: { codec: 'json', config: { host: '127.0.0.1', port } },
          drive: async () => {
            const socket = createSocket('udp4');
            for (const datagram of [BAD_JSON, GOOD_JSON]) {
              await new Promise<void>((resolve, reject) => socket.send(datagram, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
            }
            await new Promise<void>((r) => socket.close(r));
          },
          close: nothingToClose,
        };
      },
    },
    offramp: {
      async prepare() {
        const peer = await udpPeer();
        const port = await freeUdpPort();
        return {
          ramp: { codec: 'statsd', config: { host: '127.0.0.1', port, dst_host: '127.0.0.1', dst_port: peer.port } },
          drive: badThenGoodMetric,
          arrived: () => peer.received().includes(METRIC_LINE),
          close: peer.close,
        };
      },
    },
  },

  chat: {
    // against the local Discord stand-in (test/connectors/chat/stand-in.ts): no traffic leaves the machine
    onramp: {
      noBadInput: "gateway events are the client library's structures, never decoded",
      noBytes: 'gateway events are structured values; no bytes are read',
      unopenable: {
        what: 'a token the platform refuses',
        async prepare() {
          const standIn = await StandIn.start();
          return { ramp: { config: { token: 'refused', api_url: standIn.apiUrl, timeout: 5000 } }, close: () => standIn.close() };
        },
      },
      async prepare() {
        const standIn = await StandIn.start();
        return {
          ramp: { config: { token: CHAT_TOKEN, api_url: standIn.apiUrl, timeout: 5000 } },
          drive: async () => {
            const deadline = Date.now() + 10000;
            while (standIn.sockets.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
            standIn.guildCreate();
            standIn.messageCreate('5001', 'compliance');
          },
          close: () => standIn.close(),
        };
      },
    },
  },

  ws: {
    onramp: {
      unopenable: tcpPortInUse((port) => ({ host: '127.0.0.1', port })),
      async prepare() {
        const port = await freeTcpPort();
        let client: WebSocket | undefined;
        return {
          ramp: { codec: 'json', config: { host: '127.0.0.1', port } },
          drive: async () => {
            const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
            ws.on('error', () => undefined); // the child closes this connection on shutdown
            client = ws;
            await new Promise<void>((resolve, reject) => ws.once('open', resolve).once('error', reject));
            ws.send(BAD_JSON);
            ws.send(GOOD_JSON);
          },
          close: async () => client?.terminate(),
        };
      },
    },
    offramp: {
      async prepare() {
        const peer = await wsPeer();
        return {
          ramp: { codec: 'statsd', config: { url: `ws://127.0.0.1:${peer.port}/` } },
          drive: badThenGoodMetric,
          arrived: () => peer.received().includes(METRIC_LINE),
          close: peer.close,
        };
      },
    },
  },

  rest: {
    onramp: {
      unopenable: tcpPortInUse((port) => ({ host: '127.0.0.1', port })),
      async prepare() {
        const port = await freeTcpPort();
        // keep-alive: the child's server must drop idle connections on shutdown, not wait for them
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        return {
          ramp: { codec: 'json', config: { host: '127.0.0.1', port } },
          drive: async () => {
            await httpPost(agent, port, BAD_JSON);
            await httpPost(agent, port, GOOD_JSON);
          },
          close: async () => agent.destroy(),
        };
      },
    },
    offramp: {
      async prepare() {
        const peer = await httpPeer();
        return {
          ramp: { codec: 'json', config: { endpoint: `http://127.0.0.1:${peer.port}/`, method: 'POST' } },
          drive: async (io) => {
            await io.send({ refuse: true }); // the peer answers 500: a failed send
            await io.send({ n: 1 });
          },
          arrived: () => peer.received().some((body) => body.includes('"n":1')),
          close: peer.close,
        };
      },
    },
  },

  kafka: {
    service: 'kafka',
    onramp: {
      unopenable: kafkaUnreachable((broker) => ({ group_id: 'compliance', topics: ['compliance'], brokers: [broker] })),
      async prepare() {
        const peer = await kafkaPeer();
        return {
          ramp: {
            codec: 'json',
            config: { group_id: `${peer.topic}-eddy`, topics: [peer.topic], brokers: [peer.broker], rdkafka_options: { 'auto.offset.reset': 'earliest' } },
          },
          drive: () => peer.produce([BAD_JSON, GOOD_JSON]),
          close: peer.close,
        };
      },
    },
    offramp: {
      unopenable: kafkaUnreachable((broker) => ({ topic: 'compliance', brokers: [broker] })),
      async prepare() {
        const peer = await kafkaPeer();
        return {
          ramp: { codec: 'statsd', config: { topic: peer.topic, brokers: [peer.broker] } },
          drive: badThenGoodMetric,
          arrived: () => peer.received().includes(METRIC_LINE),
          close: peer.close,
        };
      },
    },
  },

  kv: {
    offramp: {
      unopenable: {
        what: 'its directory (a regular file is in the way)',
        prepare: async (dir) => ({ ramp: { linked: true, config: { dir: writeSource(dir, 'not-a-dir', 'x') } }, close: nothingToClose }),
      },
      async prepare(dir) {
        return {
          ramp: { linked: true, config: { dir: join(dir, 'kv') } },
          drive: async (io) => {
            await io.send({ frobnicate: { key: 'k' } }); // no such command
            await io.send({ put: { key: 'k', value: 'v' } });
          },
          // the put's reply (null: the key was new) on the out port
          arrived: (_io, status) => status.replies.out.length >= 1,
          close: nothingToClose,
        };
      },
    },
  },

  // against the node of `scripts/services start elastic` (its start fails, naming that command, when none runs)
  elastic: {
    service: 'elastic',
    offramp: {
      unopenable: {
        what: 'its cluster (nothing listens on the node port)',
        prepare: async () => ({ ramp: { config: { nodes: [`http://127.0.0.1:${await freeTcpPort()}`] } }, close: nothingToClose }),
      },
      async prepare() {
        const { host, port } = serviceAddress('elastic');
        const node = `http://${host}:${port}`;
        const index = `eddy-compliance-${process.pid}-${Date.now().toString(36)}`;
        return {
          ramp: { linked: true, config: { nodes: [node] } },
          drive: async (io) => {
            await io.send({ n: 0 }); // no $index: failed without a request
            await io.send({ n: 1 }, { index, doc_id: 'good' });
          },
          // the cluster's answer for the good document, on the out port
          arrived: (_io, status) => status.replies.out.length >= 1,
          close: async () => {
            await fetch(`${node}/${index}`, { method: 'DELETE' }).catch(() => undefined);
          },
        };
      },
    },
  },

  postgres: {
    service: 'postgres',
    onramp: {
      noBadInput: 'rows are structured values (field records), never decoded',
      noBytes: 'rows are structured values; no bytes are read',
      unopenable: noPostgres({ query: 'SELECT 1 WHERE $1::timestamptz < $2::timestamptz', interval_ms: 100 }),
      async prepare(dir) {
        const db = await postgresTable('n int4, ts timestamptz NOT NULL DEFAULT clock_timestamp()');
        // both bounds shifted back: a row is polled only once its INSERT has surely committed
        const lag = `interval '250 milliseconds'`;
        const query = `SELECT n FROM ${db.table} WHERE ts >= $1::timestamptz - ${lag} AND ts < $2::timestamptz - ${lag}`;
        return {
          ramp: { config: { ...db.connection, query, interval_ms: 20, cache: { path: join(dir, 'postgres.cache') } } },
          drive: async () => {
            await db.client.query(`INSERT INTO ${db.table} (n) VALUES (1)`);
          },
          close: db.close,
        };
      },
    },
    offramp: {
      unopenable: noPostgres({ table: 'anything' }),
      async prepare() {
        const db = await postgresTable('n int4');
        let stored = false;
        let checking: Promise<void> | undefined;
        return {
          ramp: { config: { ...db.connection, table: db.table } },
          drive: async (io) => {
            await io.send('not a field record'); // refused by the sink
            await io.send({ n: { fieldType: 'INT4', name: 'n', value: 1 } });
          },
          // polled synchronously: each call looks at the last answer and asks again
          arrived: () => {
            checking ??= db.client.query(`SELECT count(*)::int AS c FROM ${db.table} WHERE n = 1`).then(
              (r) => void ((stored = r.rows[0].c === 1), (checking = undefined)),
              () => void (checking = undefined),
            );
            return stored;
          },
          close: async () => {
            await checking;
            await db.close();
          },
        };
      },
    },
  },

  amqp: {
    service: 'rabbitmq',
    onramp: {
      unopenable: amqpUnreachable((amqp_addr) => ({ amqp_addr, queue_name: 'eddy-compliance-never', queue_options: {} })),
      async prepare() {
        const { client, addr } = await rabbitmq();
        const queue = await client.queue(unique('compliance'), { durable: false });
        return {
          ramp: { codec: 'json', config: { amqp_addr: addr, queue_name: queue, queue_options: {} } },
          drive: () => client.publish('', queue, [BAD_JSON, GOOD_JSON]),
          close: () => client.close(),
        };
      },
    },
    offramp: {
      unopenable: amqpUnreachable((amqp_addr) => ({ amqp_addr })),
      async prepare() {
        const { client, addr } = await rabbitmq();
        const queue = await client.queue(unique('compliance'), { durable: false });
        const collecting = await client.collect(queue);
        return {
          ramp: { codec: 'statsd', config: { amqp_addr: addr, routing_key: queue } },
          drive: badThenGoodMetric,
          arrived: () => collecting.received.some((m) => m.body === METRIC_LINE),
          close: () => client.close(),
        };
      },
    },
  },

  nats: {
    service: 'nats',
    onramp: {
      unopenable: {
        what: 'its server (nothing listens on the port)',
        prepare: async () => ({ ramp: { config: { hosts: [`127.0.0.1:${await freeTcpPort()}`], subject: 'eddy.compliance' } }, close: nothingToClose }),
      },
      async prepare() {
        // a JetStream stream holds the bad and the good message before the child subscribes: no race with its subscription
        const nc = await natsPeer();
        const name = `EDDY_COMPLIANCE_${process.pid}_${Date.now()}`;
        const subject = `eddy.compliance.${name}`;
        const jsm = await jetstreamManager(nc);
        await jsm.streams.add({ name, subjects: [subject], storage: StorageType.Memory });
        const js = jetstream(nc);
        await js.publish(subject, BAD_JSON);
        await js.publish(subject, GOOD_JSON);
        return {
          ramp: { codec: 'json', config: { hosts: [natsHost()], subject, jetstream: { stream: name, durable: 'compliance' } } },
          drive: nothingToClose,
          close: async () => {
            await jsm.streams.delete(name).catch(() => undefined);
            await nc.close();
          },
        };
      },
    },
    offramp: {
      unopenable: {
        what: 'its server (nothing listens on the port)',
        prepare: async () => ({ ramp: { config: { hosts: [`127.0.0.1:${await freeTcpPort()}`], subject: 'eddy.compliance' } }, close: nothingToClose }),
      },
      async prepare() {
        const nc = await natsPeer();
        const subject = `eddy.compliance.out_${process.pid}_${Date.now()}`;
        const received: string[] = [];
        nc.subscribe(subject, {
          callback: (err, msg) => {
            if (!err) received.push(new TextDecoder().decode(msg.data));
          },
        });
        await nc.flush();
        return {
          ramp: { codec: 'statsd', config: { hosts: [natsHost()], subject } },
          drive: badThenGoodMetric,
          arrived: () => received.includes(METRIC_LINE),
          close: () => nc.close(),
        };
      },
    },
  },

  // against the Pub/Sub fake of `scripts/services start pubsub` (test/helpers/setup.ts points PUBSUB_EMULATOR_HOST at it)
  pubsub: {
    service: 'pubsub',
    onramp: {
      unopenable: {
        what: 'its subscription (none of that name exists)',
        prepare: async () => ({
          ramp: { config: { subscription: 'eddy-compliance-no-such-subscription', project_id: PUBSUB_PROJECT } },
          close: nothingToClose,
        }),
      },
      async prepare() {
        const client = new PubsubClient();
        const { topic, subscription } = await client.topicWithSubscription();
        return {
          ramp: { codec: 'json', config: { subscription, project_id: PUBSUB_PROJECT } },
          drive: async () => {
            await client.publish(topic, [BAD_JSON, GOOD_JSON]);
          },
          close: () => client.close(),
        };
      },
    },
  },

  // a local HTTPS stand-in for the Log API, its certificate trusted through ca_file
  logvendor: {
    offramp: {
      unopenable: {
        what: 'its ca_file (missing)',
        prepare: async (dir) => ({
          ramp: { config: { license_key: 'compliance', endpoint: 'https://127.0.0.1:1/log/v1', ca_file: join(dir, 'missing', 'ca.pem') } },
          close: nothingToClose,
        }),
      },
      async prepare() {
        const cert = makeCert();
        const server = await logServer(cert);
        // the stand-in refuses a body that asks to be refused: a failed send
        server.answer = (req) => (req.raw.includes('refuse') ? { status: 400, body: '{"error":"refused"}' } : { status: 202 });
        return {
          ramp: { config: { license_key: 'compliance', compress_logs: false, endpoint: server.url, ca_file: cert.certFile } },
          drive: async (io) => {
            await io.send({ refuse: true });
            await io.send({ n: 1 });
          },
          arrived: () => server.entries().some((entry) => (entry as { n?: number }).n === 1),
          close: async () => {
            await server.close();
            cert.remove();
          },
        };
      },
    },
  },

  crononome: {
    onramp: {
      noBadInput: 'ticks are structured values, never decoded',
      noBytes: 'ticks are structured values; no bytes are read',
      async prepare() {
        return { ramp: { config: { entries: [{ name: 'tick', expr: '* * * * * *' }] } }, drive: nothingToClose, close: nothingToClose };
      },
    },
  },

  // OTLP/gRPC: a grpc-js client sends bytes that are not OTLP, then the OpenTelemetry JS trace exporter sends a span
  otel: {
    onramp: {
      unopenable: tcpPortInUse((port) => ({ host: '127.0.0.1', port })),
      async prepare() {
        const port = await freeTcpPort();
        const raw = new otel.RawClient(port);
        const exporter = otel.traceExporter(port);
        return {
          ramp: { config: { host: '127.0.0.1', port } },
          drive: async () => {
            const bad = await raw.export(otel.EXPORT_PATHS.trace, otel.NOT_PROTOBUF);
            if (bad.error?.code !== grpcStatus.INVALID_ARGUMENT)
              throw new Error(`the bad request was answered ${bad.error?.code ?? 'OK'}, not INVALID_ARGUMENT`);
            const good = await otel.exportSpans(exporter, otel.recordedSpans({ 'service.name': 'compliance' }, ['good']));
            if ((good.code as number) !== otel.SUCCESS) throw new Error(`the good export failed: ${String(good.error)}`);
          },
          // connections stay open until after the child's shutdown check
          close: async () => {
            raw.close();
            await exporter.shutdown();
          },
        };
      },
    },
    // OTLP/HTTP JSON to a stand-in receiver: an event that is not OTLP fails alone, a log record arrives
    offramp: {
      // nothing to open at activation: a missing TLS file is a 400 at publish (test/connectors/otel/offramp.test.ts)
      noBytes: 'the type encodes each batched OTLP request itself; the machinery encodes no per-event bytes (ramp_bytes stays 0)',
      async prepare() {
        const bodies: string[] = [];
        const server = createHttpServer((req, res) => {
          let body = '';
          req.setEncoding('utf8').on('data', (d: string) => (body += d));
          req.on('end', () => {
            bodies.push(body);
            res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
          });
        });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        const port = (server.address() as { port: number }).port;
        return {
          ramp: { config: { endpoint: `http://127.0.0.1:${port}`, protocol: 'http/json', compression: 'none', batch: { size: 1 } } },
          drive: async (io) => {
            await io.send({ not: 'otlp' });
            await io.send({ resource: { attributes: [] }, scopeLogs: [{ logRecords: [{ body: { stringValue: 'compliance-good' } }] }] });
          },
          arrived: () => bodies.some((b) => b.includes('compliance-good')),
          close: () => new Promise<void>((r) => server.close(() => r())),
        };
      },
    },
  },
};
