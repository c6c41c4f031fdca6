import { Subject, Subscriber, config, type Observer, type Subscription } from './rx';

/**
 * read once: the module's exports are getters, too slow to call per event.
 * Typed as the one flag read here: RxJS 7's synchronous error handling,
 * deprecated (RxJS 8 removes it, and this assignment then fails to compile).
 */
const rxConfig: { readonly useDeprecatedSynchronousErrorHandling: boolean } = config;

type SubscribeArgs<T> = [
  observerOrNext?: Partial<Observer<T>> | ((value: T) => void) | null,
  error?: ((error: unknown) => void) | null,
  complete?: (() => void) | null,
];

/**
 * A Subject whose `next` is a plain loop over its subscribers. RxJS 7's
 * `Subject.next` wraps every call in a closure (errorContext, which only does
 * anything with the deprecated synchronous error handling) and walks the
 * observers with an iterator object (its CommonJS build is ES5): two
 * allocations per event per Subject, and the hot path goes through several
 * Subjects (onramp share, pipeline input, node, output).
 *
 * It keeps its own copy-on-write list of the subscribers, by RxJS's public
 * API only (what `subscribe` returns, and a finalizer on it), so it no longer
 * reads the Subject's internal observer fields (deprecated, internal in RxJS 8).
 * Behaviour is a Subject's: subscription order; observers added or removed
 * during delivery take effect from the next value (the loop walks the list it
 * started with); after `complete`/`error` every subscriber has finalized and
 * left the list, so later values reach no one; after `unsubscribe` `next`
 * throws (Subject's own `next` does that). It falls back to `Subject.next`
 * when the deprecated synchronous error handling is on: only that sets up the
 * context the handling needs.
 */
export class FastSubject<T> extends Subject<T> {
  private subscribers: readonly Subscriber<T>[] = [];
  /** something other than a Subscriber came back from `subscribe`: deliver through Subject.next from then on */
  private untracked = false;
  private ended = false;

  override next(value: T): void {
    // an application may still turn RxJS 7's synchronous error handling on: Subject.next is then the one that works
    if (this.closed || this.untracked || rxConfig.useDeprecatedSynchronousErrorHandling) return super.next(value);
    for (const subscriber of this.subscribers) subscriber.next(value);
  }

  override subscribe(...args: SubscribeArgs<T>): Subscription {
    // forwarded as given: a caller holding this as an Observable may still pass RxJS's (next, error, complete)
    const subscription = super.subscribe(...(args as [Partial<Observer<T>>?]));
    if (!(subscription instanceof Subscriber)) {
      this.untracked = true;
      return subscription;
    }
    const subscriber = subscription as Subscriber<T>;
    this.subscribers = [...this.subscribers, subscriber];
    // runs at once when the subscriber is already closed (subscribed after complete or error)
    subscriber.add(() => (this.subscribers = this.subscribers.filter((s) => s !== subscriber)));
    return subscription;
  }

  override error(err: unknown): void {
    this.ended = true;
    super.error(err);
  }

  override complete(): void {
    this.ended = true;
    super.complete();
  }

  override unsubscribe(): void {
    this.subscribers = [];
    super.unsubscribe();
  }

  /** `complete`, `error` or `unsubscribe` was called: what Subject's deprecated `isStopped` says, for subclasses */
  protected get stopped(): boolean {
    return this.ended || this.closed;
  }
}
