/**
 * window::aggregate over a partitioned source: one Aggregator per source
 * partition (core/state.ts), each with its own windows and its own
 * watermark, like a Kafka Streams task. Why per partition and not one
 * watermark for the node: a partition's backlog (after a takeover, or a
 * slow partition) is behind the others in event time; under one watermark
 * it would be late, under its own it is on time. Events of one group must
 * come through one partition for its windows to be whole (the repartition
 * pattern, docs/stream-processing.md).
 *
 * Idle partitions: a partition's windows close when its own watermark
 * passes them, and its watermark moves only with its events. A partition
 * that sent nothing for `idle_timeout` (scheduler time) stops waiting for
 * itself: its watermark follows the node's, the lowest watermark of the
 * partitions that are not idle, so its last windows close once the others
 * have moved past them. Its next event makes it active again (from the
 * watermark it reached; an event behind that is late). Idle time is
 * measured on an IdleClock (idle-clock.ts): time while the source read
 * nothing (a breaker, a restore, a commit) does not count, so a backlog
 * waiting behind such a pause is not taken for silence.
 */
import type { SchedulerLike } from '../../core/rx';
import type { EddyEvent, Insight } from '../../core/event';
import { partitionOf, type PartitionedState, type StateChanges, type StateValue } from '../../core/state';
import { idMinter } from '../operators/_shared/support';
import { Aggregator, type AggregatorPlan, type Emit } from './aggregator';
import type { IdleClock } from './idle-clock';

class Task {
  /** idle-clock time of its last event (or of its creation) */
  lastSeen: number;

  constructor(
    readonly aggregator: Aggregator,
    now: number,
  ) {
    this.lastSeen = now;
  }
}

export class PartitionedAggregators implements PartitionedState {
  private readonly tasks = new Map<string, Task>();
  private readonly mint: ReturnType<typeof idMinter>;
  /** scheduler time of the last look for idle partitions: at most one per millisecond */
  private lastIdleScan = -Infinity;
  /** the task of the previous event, and its partition */
  private last: Task | undefined;
  private lastPartition = '';
  /** PartitionedState.savedWithSources: every aggregator, now and to come */
  private savedHeld = false;

  constructor(
    private readonly plan: AggregatorPlan,
    private readonly scheduler: SchedulerLike,
    private readonly emit: Emit,
    private readonly raise: (insight: Insight) => void,
    private readonly from: string,
    /** event time only: a partition without events for this long stops holding its windows open */
    private readonly idleMs: number,
    /** what idleness is measured on: the scheduler's time less the time the sources read nothing */
    private readonly clock: IdleClock,
  ) {
    this.mint = idMinter(plan.uid);
  }

  push(event: EddyEvent): void {
    const partition = partitionOf(event);
    // the common case, one partition after another of the same: no Map lookup
    let task = this.last;
    if (task === undefined || partition !== this.lastPartition) {
      task = this.task(partition);
      this.last = task;
      this.lastPartition = partition;
    }
    task.aggregator.push(event);
    // processing time never waits for a partition; one partition (every unpartitioned source) has no one to wait for
    if (this.plan.time) {
      const now = this.clock.now();
      task.lastSeen = now;
      if (this.tasks.size > 1 && now > this.lastIdleScan) {
        this.lastIdleScan = now;
        this.releaseIdle(now);
      }
    }
  }

  /** The source completed: every partition's open windows (aggregator.flush). */
  flush(): void {
    for (const task of this.tasks.values()) task.aggregator.flush();
  }

  dispose(): void {
    for (const task of this.tasks.values()) task.aggregator.dispose();
  }

  /** An insight about one of our outputs: its partition's aggregator settles its members. */
  onInsight(insight: Insight): Insight | null {
    const task = insight.event ? this.tasks.get(partitionOf(insight.event)) : undefined;
    return task ? task.aggregator.onInsight(insight) : insight;
  }

  /** The node's watermark: the lowest of the partitions that are not idle (-Infinity before any event). */
  watermark(): number {
    return this.activeWatermark(this.clock.now()) ?? -Infinity;
  }

  openGroups(): number {
    let n = 0;
    for (const task of this.tasks.values()) n += task.aggregator.openGroups();
    return n;
  }

  // ---- PartitionedState ----

  watermarks(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [partition, task] of this.tasks) if (task.aggregator.currentWatermark > -Infinity) out[partition] = task.aggregator.currentWatermark;
    return out;
  }

  partitions(): string[] {
    return [...this.tasks.keys()];
  }

  snapshot(partition: string): Map<string, StateValue> {
    return this.tasks.get(partition)?.aggregator.snapshot() ?? new Map<string, StateValue>();
  }

  takeChanges(): Map<string, StateChanges> {
    const out = new Map<string, StateChanges>();
    for (const [partition, task] of this.tasks) {
      const changes = task.aggregator.takeChanges();
      if (changes.size > 0) out.set(partition, changes);
    }
    return out;
  }

  restore(partition: string, entries: ReadonlyMap<string, StateValue>): void {
    this.release(partition);
    const task = this.task(partition);
    task.aggregator.restore(entries);
  }

  savedWithSources(): void {
    this.savedHeld = true;
    for (const task of this.tasks.values()) task.aggregator.savedWithSources = true;
  }

  release(partition: string): void {
    const task = this.tasks.get(partition);
    if (!task) return;
    task.aggregator.dispose();
    this.tasks.delete(partition);
    if (this.last === task) this.last = undefined;
  }

  private task(partition: string): Task {
    let task = this.tasks.get(partition);
    if (!task) {
      const aggregator = new Aggregator(this.plan, this.scheduler, this.emit, this.raise, this.from, partition, this.mint);
      aggregator.savedWithSources = this.savedHeld;
      this.tasks.set(partition, (task = new Task(aggregator, this.clock.now())));
    }
    return task;
  }

  /** Idle partitions' watermarks follow the node's, closing their windows the others have passed (`now`: idle-clock time). */
  private releaseIdle(now: number): void {
    const watermark = this.activeWatermark(now);
    if (watermark === undefined) return;
    for (const task of this.tasks.values()) {
      if (now - task.lastSeen >= this.idleMs) task.aggregator.advanceTo(watermark);
    }
  }

  /** The lowest watermark of the partitions not idle at `now`; undefined when every one is idle. */
  private activeWatermark(now: number): number | undefined {
    let lowest: number | undefined;
    for (const task of this.tasks.values()) {
      if (now - task.lastSeen >= this.idleMs) continue;
      const w = task.aggregator.currentWatermark;
      if (lowest === undefined || w < lowest) lowest = w;
    }
    return lowest;
  }
}
