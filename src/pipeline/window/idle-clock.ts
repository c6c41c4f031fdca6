/**
 * The clock a partition's idleness is measured on (`idle_timeout`): the
 * scheduler's time, standing still while a source of the node reads
 * nothing (a breaker holds it, or it restores its state or commits a
 * transaction: `PartitionedState.sourceReading`).
 *
 * Why: "sent nothing for idle_timeout" means "has nothing to send" only
 * while the partition is being read. A source held for longer than the
 * timeout (a restore waiting for a dead member's transaction, a sink down)
 * comes back with a backlog in every partition; measured on the wall
 * clock, every partition but the first to speak would count as idle, be
 * moved to that partition's watermark, and its backlog would go to `late`.
 * Flink measures idleness the same way (a relative clock paused while the
 * split is paused or backpressured).
 */
import type { SchedulerLike } from '../../core/rx';

export class IdleClock {
  /** the sources that read nothing now */
  private readonly stopped = new Set<string>();
  /** scheduler time when the first of them stopped */
  private stoppedAt = 0;
  /** scheduler time that passed with a source stopped, before `stoppedAt` */
  private stoppedFor = 0;

  constructor(private readonly scheduler: SchedulerLike) {}

  /** Scheduler time less the time some source read nothing. */
  now(): number {
    const t = this.scheduler.now();
    return t - this.stoppedFor - (this.stopped.size > 0 ? t - this.stoppedAt : 0);
  }

  /** Source `source` stopped reading (false) or reads again (true); repeated calls change nothing. */
  sourceReading(source: string, reading: boolean): void {
    if (reading) {
      if (!this.stopped.delete(source) || this.stopped.size > 0) return;
      this.stoppedFor += this.scheduler.now() - this.stoppedAt;
    } else if (!this.stopped.has(source)) {
      if (this.stopped.size === 0) this.stoppedAt = this.scheduler.now();
      this.stopped.add(source);
    }
  }
}
