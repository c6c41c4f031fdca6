import { peer } from '../helpers/peers';
/**
 * Helpers for the tcp and udp connector tests: free loopback ports, a
 * runtime whose events land in arrays, netcat as a peer nobody in this
 * project wrote, and fake ramp contexts for type-level tests.
 */
import { json } from '../../src/codecs/json';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer, type AddressInfo } from 'node:net';
import { asyncScheduler } from 'rxjs';
import type { EddyEvent, Meta } from '../../src/core/event';
import { createLogger, type Logger } from '../../src/core/logger';
import type { OfframpContext, OfframpType, OnrampContext } from '../../src/connectors/connector';
import { pullLoop } from '../../src/connectors/_shared/pull-loop';
import { listenHere } from '../../src/connectors/_shared/net';
import { CircuitBreaker } from '../../src/contraflow/circuit-breaker';
import { Runtime } from '../../src/runtime/runtime';
import { eventually } from '../helpers/runtime';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A port nothing listens on right now (bound to 0, read, released). */
export async function freePort(kind: 'tcp' | 'udp' = 'tcp'): Promise<number> {
  if (kind === 'udp') {
    const socket = createSocket('udp4');
    await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
    const { port } = socket.address();
    await new Promise<void>((r) => socket.close(r));
    return port;
  }
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Events that reached the `collect` offramps, by the offramp's `name`. */
export class Collected {
  readonly byName = new Map<string, EddyEvent[]>();
  get(name: string): EddyEvent[] {
    let list = this.byName.get(name);
    if (!list) this.byName.set(name, (list = []));
    return list;
  }
  get out(): EddyEvent[] {
    return this.get('out');
  }
  get err(): EddyEvent[] {
    return this.get('err');
  }
}

/** An offramp type that appends every event to `collected.get(config.name)`. */
export function collector(collected: Collected): OfframpType<{ name: string }> {
  return {
    name: 'collect',
    defaultCodec: 'json',
    autoAck: true,
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: { name: { type: 'string', description: 'list to append to' } },
    },
    create: (config) => ({ send: (_payloads, event) => void collected.get(config.name).push(event) }),
  };
}

export interface Receiver {
  runtime: Runtime;
  collected: Collected;
  /** URL of the onramp instance */
  onramp: string;
  stop(): Promise<void>;
}

/** What `receiver` may change: the logger, and the `out` offramp (`sink`, of one of the extra `types`). */
export interface ReceiverOptions {
  logger?: Logger;
  sink?: Record<string, unknown>;
  types?: OfframpType<any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any -- offramp types of any config type
}

/**
 * A runtime running `onramp` (artefact id `src`) with its `out` and `err`
 * ports each through a passthrough into a collecting offramp; `sink`
 * replaces the `out` offramp (e.g. one that holds events).
 */
export async function receiver(onramp: Record<string, unknown>, options: ReceiverOptions = {}): Promise<Receiver> {
  const collected = new Collected();
  const runtime = new Runtime({ logger: options.logger ?? createLogger('silent') }).registerOfframp(collector(collected));
  for (const type of options.types ?? []) runtime.registerOfframp(type);
  await runtime.start();
  runtime.publish('onramp', { id: 'src', ...onramp });
  runtime.publish('pipeline', passthrough('p'));
  runtime.publish('offramp', { id: 'outs', ...(options.sink ?? { type: 'collect', config: { name: 'out' } }) });
  runtime.publish('offramp', { id: 'errs', type: 'collect', config: { name: 'err' } });
  runtime.publish('binding', {
    id: 'flow',
    links: {
      '/onramp/src/{instance}/err': ['/pipeline/p/errs/in'],
      '/pipeline/p/errs/out': ['/offramp/errs/{instance}/in'],
      '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'],
      '/pipeline/p/{instance}/out': ['/offramp/outs/{instance}/in'],
    },
  });
  await runtime.activate('binding', 'flow', 'main');
  return { runtime, collected, onramp: '/onramp/src/main', stop: () => runtime.shutdown() };
}

export function passthrough(id: string) {
  return { id, interface: { inputs: ['in'], outputs: ['out'] }, nodes: [{ id: 'pass', type: 'passthrough' }], links: { in: ['pass'], pass: ['out'] } };
}

/** A running netcat and everything it printed. */
export interface Netcat {
  child: ChildProcess;
  stdout(): string;
  /** stdout split into non-empty lines */
  lines(): string[];
  stop(): Promise<void>;
}

/** Runs /usr/bin/nc (netcat-openbsd) with `args`; stdin from `input` (a file descriptor) or nothing. */
export function netcat(args: string[], input?: number): Netcat {
  const child = spawn(peer('nc'), args, { stdio: [input ?? 'ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.resume();
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  return {
    child,
    stdout: () => out,
    lines: () => out.split('\n').filter((l) => l.length > 0),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Waits until a process has bound a loopback port, read from /proc/net (no
 * packet is sent, so a one-shot netcat is not used up): a TCP listener, or
 * a UDP socket.
 */
export async function bound(port: number, kind: 'tcp' | 'udp'): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const state = kind === 'tcp' ? '0A' : '07'; // LISTEN; a UDP socket that is bound but not connected
  await eventually(
    () =>
      readFileSync(`/proc/net/${kind}`, 'utf8')
        .split('\n')
        .some((l) => l.includes(`:${hex} 00000000:0000 ${state}`)),
    5000,
    `a ${kind} socket bound to port ${port}`,
  );
}

/** What a fake offramp context recorded. */
export interface OfframpLog {
  triggers: number;
  restores: number;
  /** true while triggered more than restored */
  readonly down: boolean;
  acks: { event: EddyEvent; meta?: Meta }[];
}

/** A context for calling an offramp type's `create` directly, recording trigger/restore and acks. */
export function fakeOfframpContext(url = '/offramp/test/main', logger: Logger = createLogger('silent')): { ctx: OfframpContext; log: OfframpLog } {
  const log: OfframpLog = {
    triggers: 0,
    restores: 0,
    get down() {
      return this.triggers > this.restores;
    },
    acks: [],
  };
  const ctx: OfframpContext = {
    url,
    uid: 1,
    hostname: 'test',
    logger,
    requestExit: () => undefined,
    trigger: () => {
      log.triggers++;
    },
    restore: () => {
      log.restores++;
    },
    countBytes: () => undefined,
    insight: (kind, event, meta) => {
      if (kind === 'ack') log.acks.push({ event, meta });
    },
    raise: () => undefined,
    emit: () => undefined,
    reply: () => undefined,
    linked: false,
    codecForMime: () => 'json',
    decode: () => [],
    codec: json.create(),
    scheduler: asyncScheduler,
  };
  return { ctx, log };
}

/** A context for calling an onramp type's `create` directly. */
export function fakeOnrampContext(logger: Logger = createLogger('silent')): OnrampContext {
  const breaker = new CircuitBreaker();
  return {
    url: '/onramp/test/main',
    uid: 1,
    hostname: 'test',
    logger,
    requestExit: () => undefined,
    gate: breaker,
    pullLoop: (step, onDone) => pullLoop(breaker, step, onDone),
    linked: false,
    codecForMime: () => 'json',
    scheduler: asyncScheduler,
    listenForConnections: listenHere,
  };
}

/** A transactional event with `data`, for calling a sink directly. */
export function testEvent(seq: number, data: unknown = { seq }): EddyEvent {
  return { id: { uid: 9, seq }, data, meta: {}, ingestNs: 0n, originUri: 'svc-test://x', isBatch: false, transactional: true };
}

/** A logger that keeps what it was told, for checking warnings. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (msg: string) => void lines.push(`${level} ${msg}`);
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}
