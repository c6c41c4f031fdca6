/**
 * At most `limit` sends at a time; the others wait their turn, in order.
 * The shared offramp machinery bounds what is in flight overall (and
 * triggers the breaker at that bound); this bounds what one sink has open
 * towards its peer (requests, statements) when the two limits differ.
 */
export class Slots {
  private active = 0;
  private readonly waiting: ((granted: boolean) => void)[] = [];

  constructor(private readonly limit: number) {}

  /** `true` at once when a slot is free; else the promise of a turn (`false`: closed while waiting). */
  acquire(): true | Promise<boolean> {
    if (this.active < this.limit) {
      this.active++;
      return true;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** A send finished: its slot goes to the next in line. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next(true);
    else this.active--;
  }

  /** Turns every waiter away. */
  close(): void {
    for (const waiter of this.waiting.splice(0)) waiter(false);
  }
}
