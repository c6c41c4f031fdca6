import { interval, type SchedulerLike } from '../../core/rx';
import { nowNs } from '../../core/clock';
import type { PipelineRuntime } from '../../pipeline/pipeline';
import { type RampCounters, rampMetricEvents } from '../../connectors/_shared/ramp-metrics';

/** Under `--workers N` (docs/workers.md) the worker's id: each worker reports its own instances, tagged with it. */
const WORKER = process.env.EDDY_WORKER_ID;

export type MetricsSource = { kind: 'ramp'; counters: RampCounters } | { kind: 'pipeline'; pipeline: PipelineRuntime };

/**
 * Reports metrics of ramps and pipelines every `metrics_interval_s`, also
 * when idle (the original only flushed when an event passed). Counts are
 * cumulative; shapes follow the reference: `ramp_events` and `events`.
 */
export class MetricsReporter {
  private readonly timers = new Map<string, { unsubscribe(): void }>();

  /** With a `scheduler`, reports run on its clock (virtual time); otherwise on an unref'd timer that never keeps the process alive. */
  constructor(
    private readonly emit: (metric: Record<string, unknown>) => void,
    private readonly scheduler?: SchedulerLike,
  ) {}

  start(url: string, source: MetricsSource, intervalS: number): void {
    const report = () => {
      for (const m of metricEvents(url, source, nowNs())) this.emit(WORKER === undefined ? m : { ...m, tags: { ...(m.tags as object), worker: WORKER } });
    };
    if (this.scheduler) {
      this.timers.set(url, interval(intervalS * 1000, this.scheduler).subscribe(report));
      return;
    }
    const timer = setInterval(report, intervalS * 1000);
    timer.unref();
    this.timers.set(url, { unsubscribe: () => clearInterval(timer) });
  }

  stop(url: string): void {
    this.timers.get(url)?.unsubscribe();
    this.timers.delete(url);
  }

  stopAll(): void {
    for (const url of [...this.timers.keys()]) this.stop(url);
  }
}

export function metricEvents(url: string, source: MetricsSource, timestamp: bigint): Record<string, unknown>[] {
  if (source.kind === 'ramp') return rampMetricEvents(url, source.counters, timestamp);
  return [...source.pipeline.counts].map(([key, { count }]) => {
    const [node, direction, port] = key.split('|');
    return {
      measurement: 'events',
      tags: { pipeline: url, node, direction, port },
      fields: { count },
      timestamp,
    };
  });
}
