import { readFile } from 'node:fs/promises';
import { fullJitter } from '../../core/jitter';
import type { ConnectionOptions, MsgHdrs, NatsConnection, TlsOptions } from '@nats-io/nats-core';
import type { Meta } from '../../core/event';
import type { Logger } from '../../core/logger';
import { requirePackage } from '../../core/packages';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';
import { userName } from '../../schema/fields';

/**
 * The nats.js v3 client: the TCP transport dials, the core library has the
 * protocol pieces (headers, authenticators). The transport's `connect` is
 * typed here with nats-core's own declarations: the transport's d.ts take
 * them from '@nats-io/nats-core/internal', a package export that this
 * project's Node10 module resolution cannot follow (they would be `any`).
 */
interface NodeTransport {
  connect: (options: ConnectionOptions) => Promise<NatsConnection>;
}
const { connect } = requirePackage<NodeTransport>('@nats-io/transport-node', 'the nats connector');
const { credsAuthenticator, headers: natsHeaders } = requirePackage<typeof import('@nats-io/nats-core')>('@nats-io/nats-core', 'the nats connector');

/**
 * The spec's `options` struct, the same on both sides. `echo: false` is
 * applied (nats.js `noEcho`: the server does not deliver to a connection
 * what it published itself).
 * `reconnect_buffer_size` sizes, in the original's client, the buffer of
 * publishes held while reconnecting; nats.js has no such buffer (it drops
 * what was queued for a lost connection when it dials again), so the onramp
 * accepts it without effect (its connection publishes no messages of its
 * own to buffer) and the offramp refuses a size above 0 (its `validate`).
 */
export const optionsSchema = s.object(
  {
    token: s.string({
      minLength: 1,
      writeOnly: true,
      description: "authentication token (the server's `authorization { token }`); not with username or credentials_path",
    }),
    username: userName('user name for user/password authentication; requires password'),
    // not the shared password(): that one defaults to '', and here an absent password is what tells "no user/password" (validateOptions)
    password: s.string({ writeOnly: true, description: 'password for user/password authentication; requires username' }),
    credentials_path: s.string({
      path: 'read',
      minLength: 1,
      description: 'a NATS credentials file (user JWT and nkey seed, as `nsc` writes it), read when the instance is created',
    }),
    cert_path: s.string({ path: 'read', minLength: 1, description: 'client certificate (PEM) for mutual TLS; requires key_path and implies TLS' }),
    key_path: s.string({ path: 'read', minLength: 1, description: 'private key (PEM) of cert_path; requires cert_path' }),
    name: s.string({ minLength: 1, description: 'client name the server shows in its connection list (default: `eddy <instance url>`)' }),
    echo: s.boolean({
      default: true,
      description: 'false: the server does not deliver to this connection the messages it published itself (nats.js noEcho)',
    }),
    max_reconnects: s.integer({
      minimum: -1,
      default: -1,
      description: 'reconnect attempts per server after a lost connection before giving up for good; -1 retries forever',
    }),
    reconnect_buffer_size: s.integer({
      minimum: 0,
      description:
        "bytes of publishes the original's client held while reconnecting; nats.js holds none: accepted without effect on the onramp (it publishes nothing to hold), only 0 on the offramp (sends while disconnected fail)",
    }),
    tls: s.boolean({ default: false, description: 'require TLS (verified against the system CAs, or root_cert); cert_path and root_cert imply it too' }),
    root_cert: s.string({ path: 'read', minLength: 1, description: 'CA certificate (PEM) to verify the server with; implies TLS' }),
  },
  { default: {}, description: 'connection options: authentication, TLS, client name, reconnects' },
);

export type NatsOptions = Static<typeof optionsSchema>;

/** How long closing waits for the server to confirm what was sent last (acks, publishes). */
const CLOSE_FLUSH_MS = 2000;

/** How long one connection attempt (TCP, TLS, the server's INFO and our CONNECT) may take. */
export const CONNECT_TIMEOUT_MS = 5000;

/** Both sides' `hosts`. */
export const hostsSchema = s.array(s.string({ minLength: 1, description: 'host:port, or a nats:// or tls:// URL' }), {
  minItems: 1,
  description: 'NATS servers to connect to (host:port or nats://host:port); the client picks one and fails over to the others',
});

/** Checks what the schema cannot: options that only work together, or not together. */
export function validateOptions(options: NatsOptions | undefined): void {
  if (!options) return;
  if ((options.username === undefined) !== (options.password === undefined)) {
    throw new Error('options.username and options.password go together: set both or neither');
  }
  if ((options.cert_path === undefined) !== (options.key_path === undefined)) {
    throw new Error('options.cert_path and options.key_path go together: set both or neither');
  }
  const methods = [
    options.token !== undefined && 'token',
    options.username !== undefined && 'username/password',
    options.credentials_path !== undefined && 'credentials_path',
  ].filter(Boolean);
  if (methods.length > 1) throw new Error(`options: choose one authentication method, not ${methods.join(' and ')}`);
}

async function readOption(options: NatsOptions, key: 'credentials_path' | 'cert_path' | 'key_path' | 'root_cert'): Promise<string | undefined> {
  const path = options[key];
  if (path === undefined) return undefined;
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`options.${key}: cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * The reconnect back-off: attempts 100 ms, 200, 400 … apart, up to 5 s.
 * nats.js asks for the delay on every turn of its dial loop (also the turns
 * that only wait), not once per attempt, so a plain doubling counter would
 * reach the cap at once; this answers the same delay until that long has
 * passed since it last grew, then the doubled one.
 */
export class ReconnectDelay {
  static readonly MIN = 100;
  static readonly MAX = 5000;
  private delay = ReconnectDelay.MIN;
  private since = Date.now();

  next(): number {
    const now = Date.now();
    if (now - this.since >= this.delay) {
      this.delay = Math.min(this.delay * 2, ReconnectDelay.MAX);
      this.since = now;
    }
    return fullJitter(this.delay);
  }

  /** from the start: after a (re)connect, and when a connection is lost */
  reset(): void {
    this.delay = ReconnectDelay.MIN;
    this.since = Date.now();
  }
}

/** A connection and the back-off of its reconnects. */
export interface NatsClient {
  readonly nc: NatsConnection;
  readonly backoff: ReconnectDelay;
}

/** nats.js's connection options for ours: every spec option that the client honours, nothing pretended. */
export async function clientOptions(hosts: string[], options: NatsOptions, defaultName: string, backoff: ReconnectDelay): Promise<ConnectionOptions> {
  const [creds, cert, key, ca] = await Promise.all([
    readOption(options, 'credentials_path'),
    readOption(options, 'cert_path'),
    readOption(options, 'key_path'),
    readOption(options, 'root_cert'),
  ]);
  const result: ConnectionOptions = {
    servers: hosts,
    name: options.name ?? defaultName,
    timeout: CONNECT_TIMEOUT_MS,
    maxReconnectAttempts: options.max_reconnects,
    reconnectDelayHandler: () => backoff.next(),
  };
  if (!options.echo) result.noEcho = true;
  if (options.token !== undefined) result.token = options.token;
  if (options.username !== undefined) {
    result.user = options.username;
    result.pass = options.password;
  }
  if (creds !== undefined) result.authenticator = credsAuthenticator(new TextEncoder().encode(creds));
  if (options.tls || cert !== undefined || ca !== undefined) {
    // an object (even empty) makes nats.js require TLS; left out, TLS is used only when the server asks for it
    const tls: TlsOptions = {};
    if (cert !== undefined) tls.cert = cert;
    if (key !== undefined) tls.key = key;
    if (ca !== undefined) tls.ca = ca;
    result.tls = tls;
  }
  return result;
}

/**
 * Connects, bounded: every server is tried once (`CONNECT_TIMEOUT_MS` each)
 * and an error naming them and the cause is thrown when none answers, so an
 * unreachable server fails the activation instead of hanging it.
 */
export async function natsConnect(hosts: string[], options: NatsOptions, defaultName: string): Promise<NatsClient> {
  const backoff = new ReconnectDelay();
  const opts = await clientOptions(hosts, options, defaultName, backoff);
  try {
    const nc = await connect(opts);
    backoff.reset();
    return { nc, backoff };
  } catch (err) {
    throw new Error(`cannot connect to NATS at ${hosts.join(', ')}: ${describe(err)}`);
  }
}

/** nats.js errors are typed (ConnectionError, AuthorizationError, TimeoutError …) and often wrap their cause (a socket error, the server's answer). */
export function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string } };
  const parts = [e.message ?? String(err)];
  const cause = e.cause?.message;
  if (cause && !parts[0].includes(cause)) parts.push(cause);
  return parts.join(': ');
}

/**
 * Follows the connection's status until it closes: `down` when it is lost,
 * `up` when it is back (the reconnect back-off then starts small again),
 * `closed` once the client gave up (max_reconnects) or was closed.
 */
export function watchStatus(
  { nc, backoff }: NatsClient,
  logger: Logger,
  url: string,
  handlers: { down(): void; up(): void; closed(err: Error | undefined): void },
): void {
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        backoff.reset();
        logger.warn(`${url}: lost the connection to NATS ${status.server}; reconnecting`);
        handlers.down();
      } else if (status.type === 'reconnect') {
        logger.info(`${url}: reconnected to NATS ${status.server}`);
        handlers.up();
      } else if (status.type === 'error') {
        logger.warn(`${url}: NATS: ${describe(status.error)}`);
      }
    }
  })().catch((err: unknown) => logger.warn(`${url}: NATS status: ${err instanceof Error ? err.message : String(err)}`));
  void nc.closed().then((err) => handlers.closed(err ?? undefined));
}

/** Closes a connection after sending what is queued (acks, publishes), bounded; never throws. */
export async function closeConnection(nc: NatsConnection, logger: Logger, url: string): Promise<void> {
  if (nc.isClosed()) return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([nc.flush(), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_FLUSH_MS)))]);
  } catch {
    // disconnected: nothing can be flushed
  } finally {
    clearTimeout(timer);
  }
  try {
    await nc.close();
  } catch (err) {
    logger.debug(`${url}: closing the NATS connection: ${(err as Error).message}`);
  }
}

/** `host[:port]` of a server as written in `hosts` (scheme and credentials stripped), for origin URIs. */
export function originHost(host: string): string {
  const bare = host.replace(/^[a-z]+:\/\//i, '');
  const at = bare.lastIndexOf('@');
  return (at >= 0 ? bare.slice(at + 1) : bare).replace(/\/.*$/, '');
}

/** A message's headers as meta: name (as sent) to its values. */
export function headersMeta(hdrs: MsgHdrs | undefined): Record<string, string[]> | undefined {
  if (!hdrs) return undefined;
  const out: Record<string, string[]> = {};
  for (const [name, values] of hdrs) out[name] = [...values];
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Headers for a publish: config headers, then the event's meta `nats.headers` over them (by name); undefined when none. */
export function publishHeaders(base: Record<string, string | string[]>, meta: Meta | undefined): MsgHdrs | undefined {
  const fromMeta = meta?.headers;
  if (fromMeta !== undefined && (fromMeta === null || typeof fromMeta !== 'object' || Array.isArray(fromMeta))) {
    throw new Error('meta nats.headers must be a map of header name to a string or a list of strings');
  }
  const merged: Record<string, unknown> = { ...base, ...(fromMeta as Record<string, unknown> | undefined) };
  const names = Object.keys(merged);
  if (names.length === 0) return undefined;
  const hdrs = natsHeaders();
  for (const name of names) {
    const value = merged[name];
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (typeof v !== 'string') throw new Error(`header '${name}': values must be strings, not ${(JSON.stringify(v) as string | undefined)?.slice(0, 50)}`);
      try {
        hdrs.append(name, v);
      } catch (err) {
        throw new Error(`header '${name}': ${(err as Error).message}`);
      }
    }
  }
  return hdrs;
}
