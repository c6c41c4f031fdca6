import { ObjectUnsubscribedError, Subject, config, type Observer } from './rx';

/** read once: the module's exports are getters, too slow to call per event */
const rxConfig = config;

/** RxJS 7 keeps a copy-on-write snapshot of a Subject's observers in this field; without it, fall back. */
const HAS_SNAPSHOT = 'currentObservers' in new Subject<unknown>();

/**
 * A Subject whose `next` is a plain loop over the observers. RxJS 7's
 * `Subject.next` wraps every call in a closure (errorContext, which only does
 * anything with the deprecated synchronous error handling) and walks the
 * observers with an iterator object: two allocations per event per Subject,
 * and the hot path goes through several Subjects (onramp share, pipeline
 * input, node, output). Behaviour is the same: it iterates the same
 * snapshot RxJS maintains, so observers added or removed during delivery
 * take effect from the next value, and it falls back to `Subject.next` when
 * that snapshot is not there or the deprecated error handling is on.
 */
export class FastSubject<T> extends Subject<T> {
  override next(value: T): void {
    if (!HAS_SNAPSHOT || rxConfig.useDeprecatedSynchronousErrorHandling) return super.next(value);
    if (this.closed) throw new ObjectUnsubscribedError();
    if (this.isStopped) return;
    const self = this as unknown as { currentObservers: Observer<T>[] | null };
    // `observers` (deprecated for users, kept through RxJS 7) is what Subject itself snapshots
    const observers = self.currentObservers ?? (self.currentObservers = this.observers.slice());
    for (let i = 0; i < observers.length; i++) observers[i].next(value);
  }
}
