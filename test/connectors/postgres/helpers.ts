/**
 * Helpers for the postgres connector tests, against the real server of
 * `scripts/services start postgres`: a client for the test's own SQL,
 * table names unique per run, the sink on its own, and a TCP proxy whose
 * stop is a real connection loss (the shared server itself is never stopped).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Client } from 'pg';
import type { EddyEvent } from '../../../src/core/event';
import type { Sink } from '../../../src/connectors/connector';
import { postgresOfframp, type PostgresOfframpConfig } from '../../../src/connectors/postgres/offramp';
import type { ServiceAddress } from '../../helpers/services';
import type { CircuitBreaker } from '../../../src/contraflow/circuit-breaker';
import { Runtime } from '../../../src/runtime/runtime';
import { Collected, collector, fakeOfframpContext, freePort, passthrough, recordingLogger, type OfframpLog } from '../net-helpers';

let counter = 0;

/** A table (or other object) name no other test or run uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${++counter}`;
}

/** The connection keys of both sides' configs for `address`. */
export function connection(address: ServiceAddress): { host: string; port: number; user: string; password: string; dbname: string } {
  return { host: address.host, port: address.port, user: 'postgres', password: '', dbname: 'postgres' };
}

/** A client for the test's own statements; end it after the test. */
export async function sql(address: ServiceAddress): Promise<Client> {
  const client = new Client({ host: address.host, port: address.port, user: 'postgres', database: 'postgres', options: '-c TimeZone=UTC' });
  await client.connect();
  return client;
}

/** The server's clock as the ISO text the onramp's intervals use. */
export async function serverNow(client: Client): Promise<string> {
  const { rows } = await client.query<{ now: string }>(`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now`);
  return rows[0].now;
}

export interface DirectSink {
  sink: Sink;
  log: OfframpLog;
  send(event: EddyEvent): Promise<void>;
  close(): Promise<void>;
}

/** The offramp type's sink, created on its own with a recording context. */
export async function directSink(config: Partial<PostgresOfframpConfig> & Pick<PostgresOfframpConfig, 'host' | 'port' | 'table'>): Promise<DirectSink> {
  const { ctx, log } = fakeOfframpContext('/offramp/pg/main');
  const sink = await postgresOfframp.create({ user: 'postgres', password: '', dbname: 'postgres', concurrency: 4, prepare: true, ...config }, ctx);
  return {
    sink,
    log,
    send: async (event) => {
      await sink.send([], event);
    },
    close: async () => sink.close?.(),
  };
}

/** The error a send failed with (thrown at once or rejected), or undefined when it succeeded. */
export async function failure(send: Promise<void>): Promise<Error | undefined> {
  return send.then(
    () => undefined,
    (err: unknown) => err as Error,
  );
}

/** A transactional event with `data`. */
export function event(seq: number, data: unknown): EddyEvent {
  return { id: { uid: 9, seq }, data, meta: {}, ingestNs: 0n, originUri: 'svc-test://x', isBatch: false, transactional: true };
}

/** A batch event as the batch operator builds it: `[{data: {value, meta, ingest_ns}}]`. */
export function batch(seq: number, values: unknown[]): EddyEvent {
  return {
    ...event(
      seq,
      values.map((value) => ({ data: { value, meta: {}, ingest_ns: 0n } })),
    ),
    isBatch: true,
  };
}

/** A field record. */
export function field(fieldType: string, name: string, value: unknown): { fieldType: string; name: string; value: unknown } {
  return { fieldType, name, value };
}

export interface Proxy {
  port: number;
  /** listens again on the same port */
  start(): Promise<void>;
  /** drops every connection and stops listening: the server is gone, as far as its clients can tell */
  stop(): Promise<void>;
}

/** A TCP proxy on a loopback port to `target`. */
export async function tcpProxy(target: ServiceAddress): Promise<Proxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const start = async () => {
    server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      track(client);
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => server!.once('error', reject).listen(port, '127.0.0.1', resolve));
  };
  const stop = async () => {
    for (const socket of sockets) socket.destroy();
    const s = server;
    server = undefined;
    if (s) await new Promise((r) => s.close(r));
  };
  await start();
  return { port, start, stop };
}

export interface Poller {
  runtime: Runtime;
  /** the events on the onramp's `out` port, in order */
  events: EddyEvent[];
  /** what the runtime logged */
  log: string[];
  /** the onramp instance's circuit breaker */
  breaker(): CircuitBreaker;
  stop(): Promise<void>;
}

/** A runtime running a postgres onramp with `config`, its `out` port collected (the onramp artefact is `src`). */
export async function poller(config: Record<string, unknown>): Promise<Poller> {
  const collected = new Collected();
  const logger = recordingLogger();
  const runtime = new Runtime({ logger }).registerOfframp(collector(collected));
  await runtime.start();
  runtime.publish('onramp', { id: 'src', type: 'postgres', config });
  runtime.publish('pipeline', passthrough('p'));
  runtime.publish('offramp', { id: 'outs', type: 'collect', config: { name: 'out' } });
  runtime.publish('binding', {
    id: 'flow',
    links: { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/outs/{instance}/in'] },
  });
  await runtime.activate('binding', 'flow', 'main');
  return {
    runtime,
    events: collected.out,
    log: logger.lines,
    breaker: () => runtime.onramp('/onramp/src/main')!.runtime.breaker,
    stop: () => runtime.shutdown(),
  };
}

/** The plain value of column `name` in a row event. */
export function valueOf(e: EddyEvent, name: string): unknown {
  return (e.data as Record<string, { value: unknown }>)[name]?.value;
}
