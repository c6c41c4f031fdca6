import { asyncScheduler, type SchedulerLike, type Subscription } from '../../core/rx';

/** How a waiter ended when no reply came. */
export type WaitEnd = 'timeout' | 'dropped';

interface Waiter<T> {
  readonly keys: string[];
  readonly group: unknown;
  readonly resolve: (reply: T) => void;
  readonly reject: (end: WaitEnd) => void;
  timer?: Subscription;
  ended: boolean;
}

/**
 * Request/response correlation for linked onramps (rest, ws): a request
 * waits under the ids of the events it produced until a reply names one of
 * them, or its timeout passes. Every waiter ends exactly once: answered,
 * timed out, or dropped (its connection closed); nothing is kept after that,
 * so a client that vanishes leaks nothing.
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
   * `dropGroup` end every waiter of that group at once.
   */
  wait(keys: string[], group: unknown, resolve: (reply: T) => void, reject: (end: WaitEnd) => void): void {
    const waiter: Waiter<T> = { keys, group, resolve, reject, ended: false };
    for (const key of keys) this.byKey.set(key, waiter);
    if (this.timeoutMs > 0) waiter.timer = this.scheduler.schedule(() => this.end(waiter) && reject('timeout'), this.timeoutMs);
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
    waiter.timer?.unsubscribe();
    return true;
  }
}

/** The key of an event id in a `Waiters` map. */
export const idKey = (id: { uid: number; seq: number }): string => `${id.uid}:${id.seq}`;
