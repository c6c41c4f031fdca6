/**
 * eddy's logger: one line per message on standard error, with a timestamp,
 * the level, and the fields a child logger carries (the module, the
 * instance: `[kafka /onramp/in/main]`); as text, or as JSON lines
 * (`--log-format json`, `EDDY_LOG_FORMAT=json`). Levels per module:
 * `EDDY_LOG=kafka=debug,warn` logs the kafka connector's debug lines and
 * everyone else's warnings (docs/observe.md, "Logs"). Every line has the
 * credentials of the URLs in it masked (core/redact.ts): a driver's error
 * carries the URL it was given.
 *
 * Written here rather than taken from pino, measured (Node 26, this
 * machine): pino's require costs 16.5 ms of the 153 ms `eddy server run`
 * takes to start, a line costs 1.7 µs against 1.05 µs here, and its text
 * output needs pino-pretty (21.5 ms more, 29 packages) while eddy's default
 * is text a person reads.
 */
import { maskUrlCredentials, maskUrlCredentialsDeep } from './redact';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
const order: Record<(typeof LEVELS)[number], number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export type LogFormat = 'text' | 'json';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines carry these fields too; `module` picks its level from EDDY_LOG. Optional: an application's own logger may have none (`childLogger`). */
  child?(bindings: Record<string, unknown>): Logger;
}

/** What EDDY_LOG says: a level for everyone, and levels per module. */
export interface LogLevels {
  readonly base: number;
  readonly modules: ReadonlyMap<string, number>;
}

/**
 * Reads EDDY_LOG: comma-separated, `LEVEL` for everyone (the last one
 * counts; default info) and `MODULE=LEVEL` per module. Throws naming the
 * part it cannot read.
 */
export function parseLogLevels(spec: string): LogLevels {
  let base = order.info;
  const modules = new Map<string, number>();
  for (const part of spec.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const [name, level] = part.includes('=') ? part.split('=', 2).map((p) => p.trim()) : [undefined, part];
    if (!(LEVELS as readonly string[]).includes(level)) {
      throw new Error(`EDDY_LOG: unknown level '${level}' in '${spec}' (levels: ${LEVELS.join(', ')}; per module: kafka=debug,warn)`);
    }
    if (name === undefined) base = order[level as Level];
    else if (name === '') throw new Error(`EDDY_LOG: '${part}' names no module, in '${spec}'`);
    else modules.set(name, order[level as Level]);
  }
  return { base, modules };
}

export interface LoggerOptions {
  /** text (default) or JSON lines; EDDY_LOG_FORMAT when absent */
  format?: LogFormat;
  /** where lines go (default standard error) */
  write?: (line: string) => void;
  /** the time of a line (tests fix it) */
  now?: () => Date;
}

/** The loggers that mask already (made here, or wrapped by `maskingLogger`): not wrapped again. */
const masking = new WeakSet<Logger>();

/** A logger at the levels EDDY_LOG gives (`spec`), writing text or JSON lines to standard error. */
export function createLogger(spec: string = process.env.EDDY_LOG ?? 'info', options: LoggerOptions = {}): Logger {
  const format = options.format ?? (process.env.EDDY_LOG_FORMAT === 'json' ? 'json' : 'text');
  const sink: Sink = {
    levels: parseLogLevels(spec),
    format,
    write: options.write ?? ((line) => void process.stderr.write(line)),
    now: options.now ?? (() => new Date()),
  };
  return new LineLogger(sink, {});
}

interface Sink {
  readonly levels: LogLevels;
  readonly format: LogFormat;
  readonly write: (line: string) => void;
  readonly now: () => Date;
}

class LineLogger implements Logger {
  private readonly threshold: number;
  /** `[module instance]`, made once */
  private readonly label: string;

  constructor(
    private readonly sink: Sink,
    private readonly bindings: Record<string, unknown>,
  ) {
    const module = typeof bindings.module === 'string' ? bindings.module : undefined;
    this.threshold = (module !== undefined ? sink.levels.modules.get(module) : undefined) ?? sink.levels.base;
    const worker = typeof bindings.worker === 'number' || typeof bindings.worker === 'string' ? [`worker ${bindings.worker}`] : [];
    const named = [...worker, bindings.module, bindings.instance].filter((v) => typeof v === 'string' || typeof v === 'number');
    this.label = named.length > 0 ? `[${named.join(' ')}] ` : '';
    masking.add(this);
  }

  // own properties (not prototype methods), so `{ ...logger, warn: mine }` keeps every level, as an object literal would
  readonly debug = (msg: string, fields?: Record<string, unknown>): void => {
    if (order.debug >= this.threshold) this.line('debug', msg, fields);
  };
  readonly info = (msg: string, fields?: Record<string, unknown>): void => {
    if (order.info >= this.threshold) this.line('info', msg, fields);
  };
  readonly warn = (msg: string, fields?: Record<string, unknown>): void => {
    if (order.warn >= this.threshold) this.line('warn', msg, fields);
  };
  readonly error = (msg: string, fields?: Record<string, unknown>): void => {
    if (order.error >= this.threshold) this.line('error', msg, fields);
  };

  /**
   * On the prototype, unlike the four above: `{ ...logger, warn: mine }` has
   * no `child`, so its children (childLogger) call its own methods, `mine`
   * included, instead of this logger's.
   */
  child(bindings: Record<string, unknown>): Logger {
    return new LineLogger(this.sink, { ...this.bindings, ...bindings });
  }

  private line(level: Level, msg: string, fields: Record<string, unknown> | undefined): void {
    const time = this.sink.now().toISOString();
    let line: string;
    if (this.sink.format === 'json') {
      line = safeJson({ time, level, ...this.bindings, msg, ...fields });
    } else {
      // the worker, module and instance are in the label; other bindings go with the fields
      const { module: _m, instance: _i, worker: _w, ...rest } = this.bindings;
      const all = fields === undefined ? rest : { ...rest, ...fields };
      const extra = Object.keys(all).length > 0 ? ` ${safeJson(all)}` : '';
      line = `${time} ${level.toUpperCase().padEnd(5)} ${this.label}${msg}${extra}`;
    }
    this.sink.write(maskUrlCredentials(line) + '\n');
  }
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  } catch {
    return String(v);
  }
}

/** A child of `logger` carrying `bindings`: its own `child`, or (an application's logger without one) the bindings added to every line's fields. */
export function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  if (logger.child) return logger.child(bindings);
  const withBindings = (level: Level) => (msg: string, fields?: Record<string, unknown>) => logger[level](msg, { ...bindings, ...fields });
  return {
    debug: withBindings('debug'),
    info: withBindings('info'),
    warn: withBindings('warn'),
    error: withBindings('error'),
    child: (more) => childLogger(logger, { ...bindings, ...more }),
  };
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
  const wrapped: Logger = {
    debug: masked('debug'),
    info: masked('info'),
    warn: masked('warn'),
    error: masked('error'),
    child: (bindings) => maskingLogger(childLogger(logger, bindings)),
  };
  masking.add(wrapped);
  return wrapped;
}
