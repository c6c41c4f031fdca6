/**
 * What the postgres onramp and offramp share: the connection keys of their
 * configs, the client settings built from them, and how a failure is told
 * apart as a lost connection (reconnect) rather than a refused statement.
 */
import type { ClientConfig } from 'pg';
import type { JsonSchema } from '../../schema/json-schema';
import { SESSION_OPTIONS } from './types';

export interface ConnectionConfig {
  host: string;
  port: number;
  user: string;
  password: string;
  dbname: string;
}

/** The spec's connection keys, for both sides' schemas. */
export const connectionProperties: Record<keyof ConnectionConfig, JsonSchema> = {
  host: { type: 'string', minLength: 1, description: 'database server host name or address' },
  port: { type: 'integer', minimum: 1, maximum: 65535, default: 5432, description: 'database server port' },
  user: { type: 'string', minLength: 1, description: 'user (role) to log in as' },
  password: { type: 'string', default: '', description: 'password of the user; empty for none (trust or peer authentication)' },
  dbname: { type: 'string', minLength: 1, description: 'database to connect to' },
};

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
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code.startsWith('08') || LOST_SQLSTATES.has(code) || LOST_ERRNOS.has(code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  // pg's own wording for a socket that closed or a connect that timed out
  return /Connection terminated|connection timeout|timeout expired|not queryable|Client was closed/i.test(message);
}
