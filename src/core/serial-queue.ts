import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Runs asynchronous changes one at a time, in the order they were asked
 * for. A change that fails rejects its own promise only: the ones queued
 * after it still run.
 *
 * A change may be made of other changes (a whole config applied over the
 * REST API publishes, activates and, on a failure, deactivates): `run`
 * called from the code of a change under way runs at once, as part of it,
 * where queueing it would wait for the change that waits for it. The change
 * is known by the async context it runs in (AsyncLocalStorage), and only
 * while it runs: a socket or timer it created and whose callback fires after
 * it ended carries that context too, and queues like anyone else.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  /** the change whose code is running, as its own code sees it */
  private readonly current = new AsyncLocalStorage<{ running: boolean }>();

  /** Runs `change` after every change asked for before it; from inside a change of this queue, at once, as part of it. */
  run<T>(change: () => Promise<T>): Promise<T> {
    if (this.current.getStore()?.running === true) return change();
    return this.enqueue(change);
  }

  /** Runs `change` after every change asked for so far, also when asked from inside one (then after that one ends). */
  enqueue<T>(change: () => Promise<T>): Promise<T> {
    const mark = { running: false };
    const run = this.tail.then(() => {
      mark.running = true;
      return this.current.run(mark, async () => {
        try {
          return await change();
        } finally {
          mark.running = false;
        }
      });
    });
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Settles once every change asked for so far has settled (awaited inside a change, it would wait for itself). */
  idle(): Promise<void> {
    return this.tail;
  }
}
