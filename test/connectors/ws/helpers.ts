import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { asyncScheduler } from 'rxjs';
import type { EddyEvent, Insight } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import { CircuitBreaker } from '../../../src/contraflow/circuit-breaker';
import { OnrampRuntime, onrampContext } from '../../../src/ramps/onramp';
import { OfframpRuntime } from '../../../src/ramps/offramp';
import { wsOnramp, type WsOnrampSource } from '../../../src/connectors/ws/onramp';
import { wsOfframp } from '../../../src/connectors/ws/offramp';
import { Registries } from '../../../src/runtime/registries';

import { freePort } from '../net-helpers';
export { freePort };

export interface Received {
  text: string;
  binary: boolean;
}

/** A ws client that records what it receives. */
export class Client {
  readonly received: Received[] = [];
  closed = false;
  /** the close status and reason the connection ended with */
  closedWith: { code: number; reason: string } | undefined;
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, binary) => this.received.push({ text: (data as Buffer).toString('utf8'), binary }));
    socket.on('close', (code, reason) => {
      this.closed = true;
      this.closedWith = { code, reason: reason.toString('utf8') };
    });
    socket.on('error', () => undefined);
  }

  static async open(url: string): Promise<Client> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new Client(socket);
  }

  /** the local port, as it appears in the onramp's origin URI */
  get port(): number {
    return (this.socket as unknown as { _socket: { localPort: number } })._socket.localPort;
  }

  send(data: string | Buffer, binary = typeof data !== 'string'): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(data, { binary }, (err) => (err ? reject(err) : resolve())));
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}

/** A ws server (the `ws` library) that records what it receives; `answer` may reply to each message. */
export class Server {
  readonly received: Received[] = [];
  readonly sockets = new Set<WebSocket>();
  private constructor(
    readonly wss: WebSocketServer,
    readonly port: number,
  ) {}

  static async start(port = 0, answer?: (text: string, binary: boolean, socket: WebSocket) => void): Promise<Server> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      wss.once('listening', () => resolve());
      wss.once('error', reject);
    });
    const server = new Server(wss, (wss.address() as AddressInfo).port);
    wss.on('connection', (socket) => {
      server.sockets.add(socket);
      socket.on('close', () => server.sockets.delete(socket));
      socket.on('message', (data, binary) => {
        const text = (data as Buffer).toString('utf8');
        server.received.push({ text, binary });
        answer?.(text, binary, socket);
      });
    });
    return server;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}/`;
  }

  /** Stops listening and cuts every connection. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((r) => this.wss.close(() => r()));
  }
}

const registries = Registries.withBuiltins();
const codec = (name: string) => registries.codecs.get(name, 'codec').create();
const pre = (names: string[]) => () => names.map((n) => registries.preprocessors.get(n).create({}));
let uids = 1000;

function rampContext(url: string) {
  return { url, uid: ++uids, hostname: 'test', logger: createLogger('silent'), requestExit: () => undefined };
}

export interface DirectOnramp {
  runtime: OnrampRuntime;
  source: WsOnrampSource;
  events: EddyEvent[];
  errors: EddyEvent[];
  url: string;
  stop(): Promise<void>;
}

/** The ws onramp in the shared machinery, without a runtime: its events and err events are collected. */
export async function directOnramp(config: Record<string, unknown>, options: { linked?: boolean; preprocessors?: string[] } = {}): Promise<DirectOnramp> {
  const breaker = new CircuitBreaker();
  const ctx = onrampContext(rampContext('/onramp/ws/test'), breaker, { linked: options.linked, scheduler: asyncScheduler });
  const filled = { host: '127.0.0.1', timeout: 30000, ...config };
  const source = (await wsOnramp.create(filled as never, ctx)) as WsOnrampSource;
  const runtime = new OnrampRuntime({ ctx, breaker, source, codec: codec('json'), preprocessors: pre(options.preprocessors ?? []) });
  const events: EddyEvent[] = [];
  const errors: EddyEvent[] = [];
  const subs = [runtime.out$.subscribe((e) => events.push(e)), runtime.err$.subscribe((e) => errors.push(e))];
  return {
    runtime,
    source,
    events,
    errors,
    url: `ws://127.0.0.1:${source.port}/`,
    async stop() {
      for (const s of subs) s.unsubscribe();
      await runtime.close();
    },
  };
}

export interface DirectOfframp {
  offramp: OfframpRuntime;
  insights: Insight[];
  out: EddyEvent[];
  err: EddyEvent[];
  /** feeds one event to the offramp's `in` */
  send(event: EddyEvent): void;
  stop(): Promise<void>;
}

/** The ws offramp in the shared machinery, without a runtime: insights and linked replies are collected. */
export async function directOfframp(config: Record<string, unknown>, options: { linked?: boolean } = {}): Promise<DirectOfframp> {
  const insights: Insight[] = [];
  const target = { contraflow: (i: Insight) => void insights.push(i) };
  const offramp = new OfframpRuntime({
    ctx: rampContext('/offramp/ws/test'),
    codec: codec('json'),
    codecs: codec,
    postprocessors: [],
    preprocessors: options.linked ? pre([]) : undefined,
    autoAck: wsOfframp.autoAck,
    maxInFlight: 256,
    linked: options.linked,
    createSink: (ctx) => wsOfframp.create({ binary: false, ...config } as never, ctx),
  });
  const out: EddyEvent[] = [];
  const err: EddyEvent[] = [];
  offramp.output('out').subscribe((e) => out.push(e));
  offramp.output('err').subscribe((e) => err.push(e));
  await offramp.start();
  const input = offramp.connect(target as never);
  return { offramp, insights, out, err, send: (e) => input.next(e), stop: () => offramp.close() };
}

let seq = 0;
/** A transactional event for an offramp. */
export function event(data: unknown, meta: Record<string, unknown> = {}): EddyEvent {
  return { id: { uid: 1, seq: ++seq }, data, meta, ingestNs: 1n, originUri: 'svc-test://here', isBatch: false, transactional: true };
}

export const kinds = (insights: Insight[]) => insights.map((i) => i.kind);
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
