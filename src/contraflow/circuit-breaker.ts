import { BehaviorSubject, Observable, distinctUntilChanged } from '../core/rx';

/**
 * The circuit breaker of one onramp instance: a Subject gating its reads.
 *
 * It is open while no downstream part has triggered it. Unlike the original
 * runtime, which let one restore reopen the gate while another part was still
 * broken, it remembers who triggered it and opens only when all of them restored.
 */
export class CircuitBreaker {
  private readonly triggeredBy = new Set<string>();
  private readonly state = new BehaviorSubject<boolean>(true);
  /** how often the gate closed (`trigger`) and opened again (`restore`), for the metrics */
  readonly counts = { trigger: 0, restore: 0 };

  /** true while the onramp may read */
  get isOpen(): boolean {
    return this.state.value;
  }

  /** emits the open state on every change, starting with the current one */
  readonly changes: Observable<boolean> = this.state.pipe(distinctUntilChanged());

  trigger(from: string): void {
    this.triggeredBy.add(from);
    if (!this.state.value) return;
    this.counts.trigger++;
    this.state.next(false);
  }

  restore(from: string): void {
    this.triggeredBy.delete(from);
    if (this.triggeredBy.size > 0 || this.state.value) return;
    this.counts.restore++;
    this.state.next(true);
  }

  /** which parts hold the gate closed */
  holders(): string[] {
    return [...this.triggeredBy];
  }
}
