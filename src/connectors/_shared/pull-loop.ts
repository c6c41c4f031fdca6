import { Observable, Subscriber } from 'rxjs';
import type { CircuitBreaker } from '../../contraflow/circuit-breaker';

export interface PullStep<T> {
  /**
   * Emits up to a bounded number of items into `subscriber`. Returns 'more'
   * to be called again, 'done' when the source is exhausted, or a number of
   * milliseconds to wait before the next call (a paced source).
   */
  (subscriber: Subscriber<T>): 'more' | 'done' | number;
}

/**
 * A source that reads as fast as it may: one bounded step per macrotask
 * (setImmediate), so the API, timers and sockets stay responsive under full
 * load. It checks the circuit breaker between steps, stops scheduling
 * itself while the breaker is triggered, and resumes on restore. It never
 * drops: a step only runs when the gate is open.
 */
export function pullLoop<T>(breaker: CircuitBreaker, step: PullStep<T>, onDone?: (s: Subscriber<T>) => void): Observable<T> {
  return new Observable<T>((subscriber) => {
    let stopped = false;
    let immediate: NodeJS.Immediate | undefined;
    let timeout: NodeJS.Timeout | undefined;
    let waitingForGate = false;

    const schedule = () => {
      if (!stopped && immediate === undefined) immediate = setImmediate(run);
    };
    const run = () => {
      immediate = undefined;
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
      else timeout = setTimeout(() => ((timeout = undefined), schedule()), result);
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
    };
  });
}
