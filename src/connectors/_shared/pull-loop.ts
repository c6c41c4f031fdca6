import { Observable, SchedulerLike, Subscriber, Subscription } from '../../core/rx';
import type { CircuitBreaker } from '../../contraflow/circuit-breaker';

/**
 * Emits up to a bounded number of items into `subscriber`. Returns 'more'
 * to be called again, 'done' when the source is exhausted, or a number of
 * milliseconds to wait before the next call (a paced source).
 */
export type PullStep<T> = (subscriber: Subscriber<T>) => 'more' | 'done' | number;

/**
 * A source that reads as fast as it may: one bounded step per macrotask
 * (setImmediate), so the API, timers and sockets stay responsive under full
 * load. It checks the circuit breaker between steps, stops scheduling
 * itself while the breaker is triggered, and resumes on restore. It never
 * drops: a step only runs when the gate is open.
 *
 * With a `scheduler` (marble tests), every step and wait goes through it
 * instead of setImmediate/setTimeout, so it runs in virtual time.
 */
export function pullLoop<T>(breaker: CircuitBreaker, step: PullStep<T>, onDone?: (s: Subscriber<T>) => void, scheduler?: SchedulerLike): Observable<T> {
  return new Observable<T>((subscriber) => {
    let stopped = false;
    let immediate: NodeJS.Immediate | undefined;
    let timeout: NodeJS.Timeout | undefined;
    let scheduled: Subscription | undefined;
    let waitingForGate = false;

    const schedule = () => {
      if (stopped || immediate !== undefined || scheduled !== undefined) return;
      if (scheduler) scheduled = scheduler.schedule(run);
      else immediate = setImmediate(run);
    };
    const wait = (ms: number) => {
      if (scheduler) scheduled = scheduler.schedule(run, ms);
      else timeout = setTimeout(() => ((timeout = undefined), schedule()), ms);
    };
    const run = () => {
      immediate = undefined;
      scheduled = undefined;
      if (stopped) return;
      if (!breaker.isOpen) {
        waitingForGate = true; // resumed by the gate subscription below
        return;
      }
      let result: 'more' | 'done' | number;
      try {
        result = step(subscriber);
      } catch (err) {
        subscriber.error(err);
        return;
      }
      if (result === 'done') {
        stopped = true;
        if (onDone) onDone(subscriber);
        else subscriber.complete();
      } else if (result === 'more') schedule();
      else wait(result);
    };
    const gate = breaker.changes.subscribe((open) => {
      if (open && waitingForGate) {
        waitingForGate = false;
        schedule();
      }
    });
    schedule();
    return () => {
      stopped = true;
      gate.unsubscribe();
      if (immediate !== undefined) clearImmediate(immediate);
      if (timeout !== undefined) clearTimeout(timeout);
      scheduled?.unsubscribe();
    };
  });
}
