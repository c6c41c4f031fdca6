/**
 * Bounded exponential back-off for reconnects and rebinds: `min` ms, doubling
 * up to `max` ms; `reset` after a success so the next outage starts small.
 */
export class Backoff {
  private delay: number;

  constructor(
    private readonly min = 100,
    private readonly max = 5000,
  ) {
    this.delay = min;
  }

  /** the delay before the next attempt; each call doubles the one after */
  next(): number {
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, this.max);
    return delay;
  }

  reset(): void {
    this.delay = this.min;
  }
}
