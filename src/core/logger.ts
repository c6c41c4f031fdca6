/**
 * One small structured logger; quiet when EDDY_LOG=silent (the tests set
 * it). Every line has the credentials of the URLs in it masked
 * (core/redact.ts): a driver's error carries the URL it was given.
 */
import { maskUrlCredentials, maskUrlCredentialsDeep } from './redact';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** The loggers that mask already (made here, or wrapped by `maskingLogger`): not wrapped again. */
const masking = new WeakSet<Logger>();

export function createLogger(level: string = process.env.EDDY_LOG ?? 'info'): Logger {
  const threshold = order[level as Level] ?? order.info;
  const write = (lvl: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < threshold) return;
    const line = fields ? `${lvl.toUpperCase()} ${msg} ${safeJson(fields)}` : `${lvl.toUpperCase()} ${msg}`;
    process.stderr.write(maskUrlCredentials(line) + '\n');
  };
  const logger = { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
  masking.add(logger);
  return logger;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  } catch {
    return String(v);
  }
}

/**
 * `logger` with the URL credentials masked in every message and every
 * string of its fields: an embedding application's own logger gets the
 * lines eddy's own would write.
 */
export function maskingLogger(logger: Logger): Logger {
  if (masking.has(logger)) return logger;
  const masked = (level: Level) => (msg: string, fields?: Record<string, unknown>) =>
    logger[level](maskUrlCredentials(msg), fields === undefined ? undefined : maskUrlCredentialsDeep(fields));
  const wrapped = { debug: masked('debug'), info: masked('info'), warn: masked('warn'), error: masked('error') };
  masking.add(wrapped);
  return wrapped;
}
