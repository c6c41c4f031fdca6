/**
 * Every instance's counters, as `system::metrics` events
 * (`ramp_events`, `ramp_bytes`, `events`): what a worker sends the primary
 * when asked, and what the primary adds up across workers. Also usable in
 * one process: `instanceMetrics(runtime)`.
 */
import { nowNs } from '../core/clock';
import { metricEvents, type MetricsSource } from '../runtime/observe/metrics';
import type { Runtime } from '../runtime/runtime';

export interface InstanceMetrics {
  url: string;
  /** the metric events of the instance right now (cumulative counts) */
  events: Record<string, unknown>[];
}

/** The counters of every live ramp and pipeline instance of `runtime`. */
export function instanceMetrics(runtime: Runtime): InstanceMetrics[] {
  const now = nowNs();
  const out: InstanceMetrics[] = [];
  for (const { url } of runtime.health().instances) {
    const source = metricsSource(runtime, url);
    if (source) out.push({ url, events: metricEvents(url, source, now) });
  }
  return out;
}

function metricsSource(runtime: Runtime, url: string): MetricsSource | undefined {
  const onramp = runtime.onramp(url);
  if (onramp) return { kind: 'ramp', counters: onramp.runtime.counters };
  const offramp = runtime.offramp(url);
  if (offramp) return { kind: 'ramp', counters: offramp.counters };
  const pipeline = runtime.pipeline(url);
  return pipeline ? { kind: 'pipeline', pipeline } : undefined;
}

/**
 * Adds up the workers' metrics: one event per measurement and tag set, its
 * numeric fields summed over every worker that runs the instance, with the
 * newest timestamp. `ramp_kernel_drops` counts what the kernel dropped for
 * a socket all the workers share: each reports the same count, so the
 * largest is taken, not the sum.
 */
/** The measurement whose count belongs to a shared socket rather than to a worker. */
const PER_SOCKET = 'ramp_kernel_drops';

export function combineMetrics(perWorker: InstanceMetrics[][]): InstanceMetrics[] {
  const byUrl = new Map<string, Map<string, Record<string, unknown>>>();
  for (const worker of perWorker) {
    for (const { url, events } of worker) {
      let combined = byUrl.get(url);
      if (!combined) byUrl.set(url, (combined = new Map<string, Record<string, unknown>>()));
      for (const e of events) {
        const key = JSON.stringify([e.measurement, e.tags]);
        const seen = combined.get(key);
        if (!seen) {
          combined.set(key, { ...e, fields: { ...(e.fields as object) } });
          continue;
        }
        const fields = seen.fields as Record<string, unknown>;
        for (const [name, value] of Object.entries(e.fields as Record<string, unknown>)) {
          if (typeof value !== 'number' || typeof fields[name] !== 'number') continue;
          fields[name] = e.measurement === PER_SOCKET ? Math.max(fields[name], value) : fields[name] + value;
        }
        if ((e.timestamp as bigint) > (seen.timestamp as bigint)) seen.timestamp = e.timestamp;
      }
    }
  }
  return [...byUrl].map(([url, events]) => ({ url, events: [...events.values()] }));
}
