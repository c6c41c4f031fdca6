import type * as Amqp from 'amqplib';
import type { Channel, ChannelModel } from 'amqplib';
import { requirePackage } from '../../core/packages';
import { s } from '../../schema/typed';

const { connect } = requirePackage<typeof Amqp>('amqplib', 'the amqp connector');

/**
 * What the amqp onramp and offramp share: opening a connection within a
 * bounded time, closing one without waiting forever, and naming the server
 * in messages without its password.
 */

/** An activation or reconnect attempt gives up after this long (an address that drops packets must not hang it). */
export const CONNECT_TIMEOUT_MS = 5000;
/** A graceful close that the server does not answer within this is cut. */
const CLOSE_TIMEOUT_MS = 2000;
/**
 * Heartbeat interval (s) asked for when `amqp_addr` names none: amqplib's
 * own default is none, and without heartbeats a connection whose peer
 * vanished without a FIN (a host down, a network cut) is never noticed.
 */
const DEFAULT_HEARTBEAT_S = 30;

/**
 * Both sides' `amqp_addr`. Not a secret field as a whole (it names the
 * server): the password inside it is masked wherever eddy shows a config
 * (schema/secrets.ts).
 */
export function amqpAddr() {
  return s.string({
    minLength: 1,
    description: 'server URI, amqp://user:password@host:port/vhost (vhost `/` is `%2f`; query parameters such as heartbeat=30 are passed to the client)',
  });
}

/** Checks `amqp_addr` at publish time; throws naming the field. */
export function validateAddr(addr: string): void {
  let url: URL;
  try {
    url = new URL(addr);
  } catch {
    throw new Error(`amqp_addr: not a URI: '${redact(addr)}'`);
  }
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:')
    throw new Error(`amqp_addr: the scheme must be amqp or amqps, not '${url.protocol.replace(/:$/, '')}'`);
  if (url.hostname === '') throw new Error(`amqp_addr: no host in '${redact(addr)}'`);
}

/** The address for messages and logs: the password replaced by `***`. */
export function redact(addr: string): string {
  try {
    const url = new URL(addr);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return addr.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}

/** `host[:port]` of the server, for origin URIs. */
export function serverOf(addr: string): string {
  const url = new URL(addr);
  return url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
}

/**
 * Opens a connection (TCP, then the AMQP handshake) within
 * CONNECT_TIMEOUT_MS. `name` shows in the broker's connection list. A
 * connection that completes after the deadline is closed, not leaked.
 */
export async function openConnection(addr: string, name: string): Promise<ChannelModel> {
  const attempt = connect(withHeartbeat(addr), { timeout: CONNECT_TIMEOUT_MS, clientProperties: { connection_name: name } });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
  });
  try {
    return await Promise.race([attempt, deadline]);
  } catch (err) {
    attempt.then(
      (late) => closeConnection(late),
      () => undefined,
    );
    throw new Error(`cannot connect to ${redact(addr)}: ${describe(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** The address with `heartbeat=DEFAULT_HEARTBEAT_S` unless it sets one (`heartbeat=0` turns them off). */
export function withHeartbeat(addr: string): string {
  const url = new URL(addr);
  if (url.searchParams.has('heartbeat')) return addr;
  url.searchParams.set('heartbeat', String(DEFAULT_HEARTBEAT_S));
  return url.toString();
}

/**
 * Closes a channel, then its connection: the channel first, because its
 * last frames (acks) must reach the server before the connection's close,
 * which the client may otherwise send ahead of them. A server that does not
 * answer is cut off. Never rejects.
 */
export async function closeConnection(connection: ChannelModel, channel?: Channel): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<'cut'>((resolve) => (timer = setTimeout(() => resolve('cut'), CLOSE_TIMEOUT_MS)));
  const closed = (async () => {
    // either rejects when already closed (the server went away): nothing left to release then
    if (channel) await channel.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
    return 'closed' as const;
  })();
  const how = await Promise.race([closed, cut]);
  clearTimeout(timer);
  if (how === 'cut') {
    // the socket under the connection; amqplib keeps it as `connection.stream`
    const stream = (connection.connection as unknown as { stream?: { destroy(): void } }).stream;
    stream?.destroy();
  }
}

/** An error's message; amqplib's refusals (ECONNREFUSED, 404 NOT_FOUND, 403 ACCESS_REFUSED) say enough. */
export function describe(err: unknown): string {
  if (err instanceof Error) {
    // a socket error's code is a string (ECONNREFUSED), a server refusal's a number (404)
    const code = (err as { code?: string | number }).code;
    const message = err.message !== '' ? err.message : String(code ?? err.name);
    return code !== undefined && typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
  }
  return String(err);
}
