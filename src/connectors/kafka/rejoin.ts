import type { Consumer } from '@platformatic/kafka';
import type { Logger } from '../../core/logger';
import { Backoff } from '../_shared/backoff';
import { isTransientError, rootMessage } from './options';

/**
 * Keeps a group member in its group when the client's own rejoin fails.
 *
 * The client rejoins by itself when a heartbeat says the group moved on (a
 * rebalance, a broker restarted). When that rejoin fails (a restarted
 * coordinator still loading its groups after the client's retries, say) it
 * emits `error` and sends no more heartbeats: the member is out of the group,
 * and a new stream of it does not join again (the client joins only a member
 * without an id, or for topics it does not track yet). Left alone the source
 * would read nothing for good; and an `error` nobody listens to throws. This
 * joins again after a back-off, as long as the failure is one waiting may
 * cure; a join that works emits `group:join`, which the ramp handles as any
 * rebalance. A refusal for good goes to `fail`.
 */
export class GroupRejoin {
  private readonly backoff = new Backoff();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly consumer: Consumer,
    private readonly logger: Logger,
    private readonly who: string,
    /** whether the member should still be in its group (not closing) */
    private readonly active: () => boolean,
    private readonly fail: (err: unknown) => void,
  ) {
    consumer.on('error', (err: unknown) => this.failed(err));
    consumer.on('consumer:group:join', () => this.backoff.reset());
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private failed(err: unknown): void {
    if (!this.active()) return;
    if (!isTransientError(err)) return this.fail(err);
    const delay = this.backoff.next();
    this.logger.warn(`${this.who}: the consumer could not rejoin its group (${rootMessage(err)}); joining again in ${delay} ms`);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (!this.active()) return;
      this.consumer.joinGroup({}, (error) => {
        if (error) this.failed(error);
      });
    }, delay);
  }
}
