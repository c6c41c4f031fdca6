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
}

/** The interval between two log lines about drops at one node and port, after the first. */
export const DROP_LOG_INTERVAL_MS = 60_000;

/**
 * Logs the events a pipeline drops, per node and reason: the first one at
 * once with its error (meta `error`), then at most one line a minute with
 * the count since the last line, so a flood of drops is seen without
 * flooding the log.
 */
export class DropLog {
  private readonly seen = new Map<string, { lastMs: number; pending: number }>();

  constructor(
    private readonly pipelineUrl: string,
    private readonly logger: Logger,
    private readonly scheduler: SchedulerLike,
  ) {}

  /** One event dropped at `node` for `reason`; only `unlinked:` drops are logged (a filter, a lookup's `on_miss: drop` drop by design). */
  note(node: string, reason: string, event: EddyEvent): void {
    if (!reason.startsWith('unlinked:')) return;
    const key = `${node}|${reason}`;
    const now = this.scheduler.now();
    const entry = this.seen.get(key);
    if (!entry) {
      this.seen.set(key, { lastMs: now, pending: 0 });
      const error = (event.meta as { error?: unknown }).error;
      this.logger.warn(
        `pipeline ${this.pipelineUrl}: ${where(node, reason)}, which no link takes: the event is dropped and acked to its source` +
          `${typeof error === 'string' ? ` (error: ${error})` : ''}; link the port to keep such events (docs/delivery.md#every-event-is-accounted-for)`,
      );
      return;
    }
    entry.pending++;
    if (now - entry.lastMs < DROP_LOG_INTERVAL_MS) return;
    this.logger.warn(`pipeline ${this.pipelineUrl}: ${where(node, reason)}: ${entry.pending} more events dropped since the last line`);
    entry.lastMs = now;
    entry.pending = 0;
  }
}

/** `node 'x' emitted on port 'err'`, or `output 'err' of the pipeline` for an interface output no binding links. */
function where(node: string, reason: string): string {
  const port = reason.replace(/^unlinked:/, '');
  return node === '' ? `output '${port}' of the pipeline` : `node '${node}' emitted on port '${port}'`;
}
