/**
 * What the postgres onramp and offramp share: the connection keys of their
 * configs, the client settings built from them, and how a failure is told
 * apart as a lost connection (reconnect) rather than a refused statement.
 */
import type { ClientConfig } from 'pg';
import { s } from '../../schema/typed';
import type { ObjectStatic } from '../../schema/typed';
import { connectHost, connectPort, password, userName } from '../../schema/fields';
import { SESSION_OPTIONS } from './types';

/** The spec's connection keys, for both sides' schemas. */
export const connectionProperties = {
  host: connectHost('database server host name or address'),
  port: connectPort({ default: 5432, description: 'database server port' }),
  user: userName(),
  password: password('password of the user; empty for none (trust or peer authentication)'),
  dbname: s.string({ minLength: 1, description: 'database to connect to' }),
};

/** The connection keys of a config that passed its schema (both sides require host, user and dbname). */
export type ConnectionConfig = ObjectStatic<typeof connectionProperties, 'host' | 'user' | 'dbname'>;

/** A connection attempt that gets no answer gives up after this long: an unreachable server fails an activation in bounded time. */
export const CONNECT_TIMEOUT_MS = 5000;

/** The pg client settings for one instance; `application_name` shows the instance in pg_stat_activity. */
export function clientConfig(config: ConnectionConfig, instanceUrl: string): ClientConfig {
  return {
    host: config.host,
    port: config.port,
    user: config.user,
    password: config.password,
    database: config.dbname,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // a server that vanished without a FIN is noticed by TCP keep-alive instead of a query hanging forever
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: `eddy ${instanceUrl}`.slice(0, 63),
    options: SESSION_OPTIONS,
  };
}

/** `user@host:port/dbname`, for messages (never the password). */
export function describe(config: ConnectionConfig): string {
  return `${config.user}@${config.host}:${config.port}/${config.dbname}`;
}

/** SQLSTATE classes and codes that mean the session is gone, not that the statement was refused. */
const LOST_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const LOST_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * True when `err` says the connection is lost or cannot be made (the server
 * is down, restarting, or out of connection slots): worth reconnecting. A
 * statement the server refused (bad SQL, a constraint, a wrong value) is not.
 */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code.startsWith('08') || LOST_SQLSTATES.has(code) || LOST_ERRNOS.has(code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  // pg's own wording for a socket that closed or a connect that timed out
  return /Connection terminated|connection timeout|timeout expired|not queryable|Client was closed/i.test(message);
}
