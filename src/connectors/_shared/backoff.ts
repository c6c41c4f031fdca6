import { fullJitter, type Random } from '../../core/jitter';

/**
 * Bounded exponential back-off for reconnects and rebinds: `min` ms, doubling
 * up to `max` ms, each delay with full jitter (core/jitter.ts); `reset`
 * after a success so the next outage starts small.
 */
export class Backoff {
  private delay: number;

  constructor(
    private readonly min = 100,
    private readonly max = 5000,
    private readonly random: Random = Math.random,
  ) {
    this.delay = min;
  }

  /** the delay before the next attempt, drawn up to a cap that doubles with each call */
  next(): number {
    const cap = this.delay;
    this.delay = Math.min(this.delay * 2, this.max);
    return fullJitter(cap, this.random);
  }

  reset(): void {
    this.delay = this.min;
  }
}
