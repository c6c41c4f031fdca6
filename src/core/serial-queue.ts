/**
 * Runs asynchronous changes one at a time, in the order they were asked
 * for. A change that fails rejects its own promise only: the ones queued
 * after it still run.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  run<T>(change: () => Promise<T>): Promise<T> {
    const run = this.tail.then(change);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Settles once every change asked for so far has settled. */
  idle(): Promise<void> {
    return this.tail;
  }
}
