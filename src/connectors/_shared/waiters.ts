import { asyncScheduler, type SchedulerLike, type Subscription } from '../../core/rx';

/** How a waiter ended when no reply came. */
export type WaitEnd = 'timeout' | 'dropped';

interface Waiter<T> {
  readonly keys: string[];
  readonly group: unknown;
  readonly resolve: (reply: T) => void;
  readonly reject: (end: WaitEnd) => void;
  alarm?: Alarm;
  ended: boolean;
}

/**
 * Runs `work` once the scheduler's clock has reached `at`, never before.
 * A Node timer may fire a little early by `Date.now()` (it counts from the
 * event loop's cached time, not from when it was set); a deadline that
 * another part checks against the same clock (a linked offramp's
 * `$deadline`) must not be answered before it has passed, so an early alarm
 * sets itself again for the rest.
 */
export class Alarm {
  private timer: Subscription;

  constructor(
    private readonly scheduler: SchedulerLike,
    private readonly at: number,
    private readonly work: () => void,
  ) {
    this.timer = this.arm();
  }

  cancel(): void {
    this.timer.unsubscribe();
  }

  private arm(): Subscription {
    return this.scheduler.schedule(
      () => {
        if (this.scheduler.now() < this.at) this.timer = this.arm();
        else this.work();
      },
      Math.max(0, this.at - this.scheduler.now()),
    );
  }
}

/**
 * Request/response correlation for linked onramps (rest, ws): a request
 * waits under the ids of the events it produced until a reply names one of
 * them, or its deadline passes. Every waiter ends exactly once: answered,
 * timed out, or dropped (its connection closed); nothing is kept after that,
 * so a client that vanishes leaks nothing. A reply answers the waiter its
 * ids name, whichever waited first.
 */
export class Waiters<T> {
  private readonly byKey = new Map<string, Waiter<T>>();

  constructor(
    private readonly timeoutMs: number,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {}

  get size(): number {
    return new Set(this.byKey.values()).size;
  }

  /**
   * Waits for a reply to any of `keys`. `group` (a connection) lets
   * `dropGroup` end every waiter of that group at once. It times out at
   * `deadline` (the scheduler's clock, ms) when given, else `timeoutMs`
   * from now.
   */
  wait(keys: string[], group: unknown, resolve: (reply: T) => void, reject: (end: WaitEnd) => void, deadline?: number): void {
    const waiter: Waiter<T> = { keys, group, resolve, reject, ended: false };
    for (const key of keys) this.byKey.set(key, waiter);
    const at = deadline ?? (this.timeoutMs > 0 ? this.scheduler.now() + this.timeoutMs : undefined);
    if (at !== undefined) waiter.alarm = new Alarm(this.scheduler, at, () => this.end(waiter) && reject('timeout'));
  }

  /** Hands a reply to the waiter of the first key that has one; false when none waits (late or unknown). */
  answer(keys: readonly string[], reply: T): boolean {
    for (const key of keys) {
      const waiter = this.byKey.get(key);
      if (waiter && this.end(waiter)) {
        waiter.resolve(reply);
        return true;
      }
    }
    return false;
  }

  /** Ends every waiter of a group (a closed connection) without an answer. */
  dropGroup(group: unknown): void {
    for (const waiter of new Set(this.byKey.values())) if (waiter.group === group && this.end(waiter)) waiter.reject('dropped');
  }

  /** Ends every waiter (the onramp stops). */
  dropAll(): void {
    for (const waiter of new Set(this.byKey.values())) if (this.end(waiter)) waiter.reject('dropped');
  }

  private end(waiter: Waiter<T>): boolean {
    if (waiter.ended) return false;
    waiter.ended = true;
    for (const key of waiter.keys) this.byKey.delete(key);
    waiter.alarm?.cancel();
    return true;
  }
}

/** The key of an event id in a `Waiters` map. */
export const idKey = (id: { uid: number; seq: number }): string => `${id.uid}:${id.seq}`;
