import { SerialQueue } from '../core/serial-queue';
import type { Logger } from '../core/logger';
import type { RuntimeStore } from './store';

/**
 * The order of the runtime's changes, and their record in the store.
 *
 * Activations and deactivations run one at a time, in the order they were
 * asked for (`exclusive`): they await sockets and files half-way, and two of
 * them interleaving there could both pass the "already running" check
 * (twenty parallel activations of one instance then wired the flow several
 * times). Store writes join the same queue, so the store sees the changes in
 * the order memory saw them. Without a store nothing is written, and changes
 * are still serialised.
 */
export class Persistence {
  /** instance changes and store writes, one at a time */
  private readonly changes = new SerialQueue();
  /** the first store write that failed: from then on the stored state is behind, and the runtime asks to exit */
  private failure?: Error;

  constructor(
    readonly store: RuntimeStore | undefined,
    private readonly logger: Logger,
    private readonly requestExit: (code: number, reason: string) => void,
  ) {}

  /**
   * Runs `change` once every change asked for before it has ended; asked
   * from inside a change (a whole config applied as one), at once, as part
   * of it.
   */
  exclusive<T>(change: () => Promise<T>): Promise<T> {
    return this.changes.run(change);
  }

  /** A store write queued behind the changes asked for before it, so the store sees them in the same order. */
  later(write: (store: RuntimeStore) => Promise<void>): void {
    if (!this.store) return;
    // the failure is kept for persisted() and reported by now()
    // queued even from inside a change: written after it, in the order memory saw the changes
    this.changes.enqueue(() => this.now(write)).catch(() => undefined);
  }

  /**
   * A store write after a change succeeded. If it fails, memory and store
   * disagree and a restart would not bring back what the runtime now runs:
   * the runtime asks to exit (status 1) rather than carry on.
   */
  async now(write: (store: RuntimeStore) => Promise<void>): Promise<void> {
    if (!this.store) return;
    try {
      await write(this.store);
    } catch (err) {
      this.failure ??= err as Error;
      this.logger.error((err as Error).message);
      this.requestExit(1, (err as Error).message);
      throw err;
    }
  }

  /** Resolves once every change asked for so far is in the store (at once without a store); rejects if a store write failed. */
  async persisted(): Promise<void> {
    if (!this.store) return; // nothing to wait for: do not queue a publish's answer behind a slow activation
    await this.changes.idle();
    if (this.failure) throw this.failure;
  }

  /** Finishes the writes already asked for, then closes the store. */
  async close(): Promise<void> {
    if (!this.store) return;
    await this.changes.idle();
    await this.store.close();
  }
}
