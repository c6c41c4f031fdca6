import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { asyncScheduler } from 'rxjs';
import { headers as natsHeaders, type ConnectionOptions, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { EddyEvent, Insight } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import { CircuitBreaker } from '../../../src/contraflow/circuit-breaker';
import { OnrampRuntime, onrampContext } from '../../../src/ramps/onramp';
import { OfframpRuntime } from '../../../src/ramps/offramp';
import type { OnrampSource } from '../../../src/connectors/connector';
import { natsOnramp } from '../../../src/connectors/nats/onramp';
import { natsOfframp } from '../../../src/connectors/nats/offramp';
import { Registries } from '../../../src/runtime/registries';
import { eventually } from '../../helpers/runtime';
import { serviceAddress } from '../../helpers/services';

export { freePort } from '../ws/helpers';

/** A name no other test run uses: subjects, streams, consumers, queue groups. */
export function unique(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** The nats service of scripts/services, as host:port. */
export function serviceHost(): string {
  const { host, port } = serviceAddress('nats');
  return `${host}:${port}`;
}

/** Its monitoring endpoint (connz, healthz). */
export function monitorBase(): string {
  return `http://${serviceAddress('nats').host}:${process.env.EDDY_NATS_MONITOR_PORT ?? 8222}`;
}

/** A plain nats.js connection for the test's own side (publisher, subscriber, stream admin). */
export function client(servers = serviceHost(), options: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  return connect({ servers, name: 'eddy-test-peer', ...options });
}

/** A subscription that keeps what it receives. */
export class Collector {
  readonly msgs: Msg[] = [];
  readonly sub: Subscription;
  constructor(nc: NatsConnection, subject: string) {
    this.sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (!err) this.msgs.push(msg);
      },
    });
  }
  get texts(): string[] {
    return this.msgs.map((m) => new TextDecoder().decode(m.data));
  }
}

export function hdrs(entries: Record<string, string | string[]>) {
  const h = natsHeaders();
  for (const [name, value] of Object.entries(entries)) for (const v of Array.isArray(value) ? value : [value]) h.append(name, v);
  return h;
}

/** Connections to a NATS server (from its monitoring endpoint) that subscribe to `subject`. */
export async function subscribers(base: string, subject: string): Promise<number> {
  const res = await fetch(`${base}/connz?subs=1&limit=1024`);
  const body = (await res.json()) as { connections: { subscriptions_list?: string[] }[] };
  return body.connections.filter((c) => c.subscriptions_list?.includes(subject)).length;
}

export async function waitForSubscribers(base: string, subject: string, count: number, ms = 20000): Promise<void> {
  await eventually(async () => (await subscribers(base, subject)) >= count, ms, `${count} subscriber(s) of ${subject}`);
}

const registries = Registries.withBuiltins();
const codec = (name: string) => registries.codecs.get(name, 'codec').create();
const pre = (names: string[]) => () => names.map((n) => registries.preprocessors.get(n).create({}));
let uids = 5000;

function rampContext(url: string) {
  return { url, uid: ++uids, hostname: 'test', logger: createLogger('silent'), requestExit: () => undefined };
}

/** Config as the repository would fill it: the schema's defaults. */
function filled(config: Record<string, unknown>): Record<string, unknown> {
  const options = { echo: true, max_reconnects: -1, tls: false, ...(config.options as object | undefined) };
  const jetstream = config.jetstream ? { batch: 100, ack_wait_ms: 30000, ...config.jetstream } : undefined;
  return { ...config, options, ...(jetstream ? { jetstream } : {}) };
}

export interface DirectOnramp {
  runtime: OnrampRuntime;
  source: OnrampSource;
  breaker: CircuitBreaker;
  events: EddyEvent[];
  errors: EddyEvent[];
  /** acks or fails an event as an offramp would */
  insight(kind: 'ack' | 'fail', event: EddyEvent): void;
  stop(): Promise<void>;
}

/** The nats onramp in the shared machinery, without a runtime: its events and err events are collected. */
export async function directOnramp(config: Record<string, unknown>, options: { preprocessors?: string[]; codec?: string } = {}): Promise<DirectOnramp> {
  const breaker = new CircuitBreaker();
  const ctx = onrampContext(rampContext('/onramp/nats/test'), breaker, { scheduler: asyncScheduler });
  const source = await natsOnramp.create(filled(config) as never, ctx);
  const runtime = new OnrampRuntime({ ctx, breaker, source, codec: codec(options.codec ?? 'json'), preprocessors: pre(options.preprocessors ?? []) });
  const events: EddyEvent[] = [];
  const errors: EddyEvent[] = [];
  const subs = [runtime.out$.subscribe((e) => events.push(e)), runtime.err$.subscribe((e) => errors.push(e))];
  return {
    runtime,
    source,
    breaker,
    events,
    errors,
    insight: (kind, event) => runtime.contraflow({ kind, event, from: '/offramp/test' }),
    async stop() {
      for (const s of subs) s.unsubscribe();
      await runtime.close();
    },
  };
}

export interface DirectOfframp {
  offramp: OfframpRuntime;
  insights: Insight[];
  send(event: EddyEvent): void;
  stop(): Promise<void>;
}

/** The nats offramp in the shared machinery, without a runtime: the insights it sends back are collected. */
export async function directOfframp(config: Record<string, unknown>, codecName = 'json'): Promise<DirectOfframp> {
  const insights: Insight[] = [];
  const target = { contraflow: (i: Insight) => void insights.push(i) };
  const offramp = new OfframpRuntime({
    ctx: rampContext('/offramp/nats/test'),
    codec: codec(codecName),
    postprocessors: [],
    autoAck: natsOfframp.autoAck,
    maxInFlight: 256,
    createSink: (ctx) => natsOfframp.create({ headers: {}, jetstream: false, ...filled(config) } as never, ctx),
  });
  await offramp.start();
  const input = offramp.connect(target as never);
  return { offramp, insights, send: (e) => input.next(e), stop: () => offramp.close() };
}

let seq = 0;
/** A transactional event for an offramp. */
export function event(data: unknown, meta: Record<string, unknown> = {}): EddyEvent {
  return { id: { uid: 1, seq: ++seq }, data, meta, ingestNs: 1n, originUri: 'svc-test://here', isBatch: false, transactional: true };
}

export const kinds = (insights: Insight[]) => insights.map((i) => i.kind);
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The Debian nats-server binary that scripts/services installs. */
export function natsServerBinary(): string {
  for (const path of ['/usr/sbin/nats-server', '/usr/bin/nats-server']) if (existsSync(path)) return path;
  throw new Error('nats-server is not installed: run scripts/services start nats');
}

/**
 * A nats-server of the test's own on an ephemeral loopback port, with
 * JetStream in its own store dir, that the test may stop and start again on
 * the same port (the shared service is never restarted). `args` adds
 * server flags (auth, TLS); `config` is written to a file passed with -c.
 */
export class PrivateServer {
  private child: ChildProcess | undefined;
  private jetstream = true;
  readonly dir: string;

  private constructor(
    readonly port: number,
    readonly monitorPort: number,
    private readonly args: string[],
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'eddy-nats-'));
  }

  static async start(options: { args?: string[]; config?: string; jetstream?: boolean } = {}): Promise<PrivateServer> {
    const { freePort } = await import('../ws/helpers');
    const server = new PrivateServer(await freePort(), await freePort(), options.args ?? []);
    server.jetstream = options.jetstream ?? true;
    if (options.config !== undefined) {
      const file = join(server.dir, 'server.conf');
      writeFileSync(file, options.config);
      server.args.push('-c', file);
    }
    await server.up();
    return server;
  }

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  get monitor(): string {
    return `http://127.0.0.1:${this.monitorPort}`;
  }

  /** Starts the server (again) and waits until it answers its health check. */
  async up(): Promise<void> {
    const child = spawn(
      natsServerBinary(),
      [
        '-a',
        '127.0.0.1',
        '-p',
        String(this.port),
        '-m',
        String(this.monitorPort),
        ...(this.jetstream ? ['-js', '-sd', join(this.dir, 'js')] : []),
        ...this.args,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    this.child = child;
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}: ${stderr}`);
        return fetch(`${this.monitor}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      20000,
      `the private nats-server on ${this.host}`,
    );
  }

  /** Stops the server (SIGTERM; SIGKILL when it lingers) and waits until it is gone. */
  async down(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child?.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
  }

  async stop(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
