import type { SchedulerLike, Subscription } from '../../core/rx';
import type { Logger } from '../../core/logger';
import { Backoff } from './backoff';

export interface ReconnectorOptions<T> {
  /** names the connection in log lines, e.g. `amqp offramp /offramp/out/main: amqp://127.0.0.1/exchange` */
  readonly label: string;
  /** logged once a connection is up again, e.g. `publishing again` */
  readonly again: string;
  readonly logger: Logger;
  readonly scheduler: SchedulerLike;
  connect(): Promise<T>;
  /** a new connection is up: take it over */
  connected(connection: T): void;
  describe(err: unknown): string;
}

/**
 * Reconnects after a connection was lost, with bounded back-off (100 ms
 * doubling to 5 s, reset by a success): the first failure of an outage is a
 * warning, the retries are debug lines, the return is an info line. `stop`
 * cancels a pending retry and hands back what an attempt in flight opened,
 * for the caller to close.
 */
export class Reconnector<T> {
  private readonly backoff = new Backoff();
  private retry: Subscription | undefined;
  private attempt: Promise<T> | undefined;
  private outageLogged = false;
  private stopped = false;

  constructor(private readonly options: ReconnectorOptions<T>) {}

  /** The connection is gone: try again after the next back-off delay. */
  lost(why: string): void {
    if (this.stopped) return;
    const { logger, label, scheduler } = this.options;
    const delay = this.backoff.next();
    const message = `${label}: ${why}; reconnecting in ${delay} ms`;
    if (this.outageLogged) logger.debug(message);
    else logger.warn(message);
    this.outageLogged = true;
    this.retry = scheduler.schedule(() => {
      this.retry = undefined;
      void this.reconnect();
    }, delay);
  }

  /** No more attempts; resolves with the connection an attempt in flight opened, if any, for the caller to close. */
  async stop(): Promise<T | undefined> {
    this.stopped = true;
    this.retry?.unsubscribe();
    this.retry = undefined;
    return this.attempt?.catch(() => undefined);
  }

  private async reconnect(): Promise<void> {
    if (this.stopped) return;
    let opened: T;
    try {
      opened = await (this.attempt = this.options.connect());
    } catch (err) {
      this.lost(this.options.describe(err));
      return;
    } finally {
      this.attempt = undefined;
    }
    // stopped meanwhile: `stop` hands what this attempt opened to the caller
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked before the await above; `stop` may have come meanwhile
    if (this.stopped) return;
    this.backoff.reset();
    this.outageLogged = false;
    this.options.logger.info(`${this.options.label}: ${this.options.again}`);
    this.options.connected(opened);
  }
}
