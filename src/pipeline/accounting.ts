import type { SchedulerLike } from '../core/rx';
import type { EddyEvent } from '../core/event';
import type { Logger } from '../core/logger';

/**
 * What one node of a pipeline did with the events that reached it, so that
 * every event is accounted for: `in` = the sum of `out` + the sum of
 * `dropped`, for a node that emits one event per event it takes (a filter,
 * a route, dedupe, sample, lookup). A node that holds events (a window, a
 * batch, reduce) or makes new ones shows what it holds as the difference.
 */
export interface NodeStats {
  node: string;
  /** the node's operator type */
  type: string;
  /** events that reached the node */
  in: number;
  /** events the node emitted on each port a link takes */
  out: Record<string, number>;
  /**
   * events dropped by a rule, acked to their sources: `filter` (a
   * runtime::cel filter said false), `miss` (enrich::lookup with
   * `on_miss: drop`), `unlinked:<port>` (emitted on a port no link takes:
   * `unlinked:err`, `unlinked:late`)
   */
  dropped: Record<string, number>;
  /** a stateful node: the source partitions it holds state for ('' is an unpartitioned source's) */
  partitions?: string[];
  /** a node on event time: each partition's watermark (ms since the epoch), once it has one */
  watermarks?: Record<string, number>;
}

/** The interval between two log lines about drops at one node and port, after the first. */
export const DROP_LOG_INTERVAL_MS = 60_000;

/**
 * One place a pipeline drops events, for one reason (a node's rule, a port
 * no link takes, an output no binding links): made once, then one count and
 * at most a clock read per event. A port no link takes is also logged: the
 * first event at once with its error (meta `error`), then at most one line
 * a minute with the count since the last line, so a flood of drops is seen
 * without flooding the log. A rule (a filter, a lookup's `on_miss: drop`)
 * drops by design and is only counted.
 */
export class DropPoint {
  /** when the last line was written (scheduler ms); undefined before the first */
  private loggedAt: number | undefined;
  /** events dropped since that line */
  private pending = 0;

  constructor(
    /** the pipeline's counter of this place (the metrics events read it too) */
    readonly counter: { count: number },
    /** how the log names the place (`node 'x' emitted on port 'err'`); undefined: not logged */
    private readonly where: string | undefined,
    private readonly pipelineUrl: string,
    private readonly logger: Logger,
    private readonly scheduler: SchedulerLike,
  ) {}

  /** One event dropped here. */
  note(event: EddyEvent): void {
    this.counter.count++;
    if (this.where === undefined) return;
    const now = this.scheduler.now();
    if (this.loggedAt === undefined) {
      this.loggedAt = now;
      const error = (event.meta as { error?: unknown }).error;
      this.logger.warn(
        `pipeline ${this.pipelineUrl}: ${this.where}, which no link takes: the event is dropped and acked to its source` +
          `${typeof error === 'string' ? ` (error: ${error})` : ''}; link the port to keep such events (docs/delivery.md#every-event-is-accounted-for)`,
      );
      return;
    }
    this.pending++;
    if (now - this.loggedAt < DROP_LOG_INTERVAL_MS) return;
    this.logger.warn(`pipeline ${this.pipelineUrl}: ${this.where}: ${this.pending} more events dropped since the last line`);
    this.loggedAt = now;
    this.pending = 0;
  }
}
