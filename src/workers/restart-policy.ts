/**
 * When a dead worker is started again, and when the primary stops trying
 * (docs/workers.md, "A worker that dies"). Erlang's supervisors bound
 * restarts per period; a count of deaths *in a row* is used here instead,
 * so a slow machine, where each restart takes seconds, cannot stretch a
 * crash loop past the period and retry forever: a death counts when the
 * worker ran less than `stableMs` since it was ready (or never got ready);
 * a worker that ran longer starts the count again.
 */
import { fullJitter, type Random } from '../core/jitter';

export interface RestartPolicyOptions {
  /** the delay before the first restart of a series */
  initialMs: number;
  /** each next delay is the last one times this */
  factor: number;
  /** delays never exceed this */
  maxMs: number;
  /** deaths in a row after which the worker is given up (restarted this many times minus one) */
  maxDeaths: number;
  /** a run at least this long since ready is stable: the next death starts a new series */
  stableMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = { initialMs: 250, factor: 2, maxMs: 10_000, maxDeaths: 5, stableMs: 60_000 };

/** What to do after a death: restart after `delayMs`, or give up. */
export type RestartDecision = { restart: true; delayMs: number; attempt: number } | { restart: false; deaths: number };

export class RestartPolicy {
  private deaths = 0;

  constructor(
    private readonly options: RestartPolicyOptions = DEFAULT_RESTART_POLICY,
    /** full jitter (core/jitter.ts): workers that died together are not restarted on the same beat */
    private readonly random: Random = Math.random,
  ) {}

  /** A worker died; `ranMs` is how long it ran since it was ready (undefined: it never got ready). */
  died(ranMs: number | undefined): RestartDecision {
    if (ranMs !== undefined && ranMs >= this.options.stableMs) this.deaths = 0;
    this.deaths++;
    if (this.deaths >= this.options.maxDeaths) return { restart: false, deaths: this.deaths };
    const delayMs = fullJitter(Math.min(this.options.maxMs, this.options.initialMs * this.options.factor ** (this.deaths - 1)), this.random);
    return { restart: true, delayMs, attempt: this.deaths };
  }
}
