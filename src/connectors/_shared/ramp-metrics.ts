/** Cumulative counters of a ramp, reported as `ramp_events` metrics. */
export class RampCounters {
  in = 0;
  out = 0;
  error = 0;
  bytes = 0;
}

/** The three metrics events of one ramp flush, in the reference's shape. */
export function rampMetricEvents(url: string, counters: RampCounters, timestamp: bigint): Record<string, unknown>[] {
  return (['in', 'out', 'error'] as const).map((port) => ({
    measurement: 'ramp_events',
    tags: { ramp: url, port },
    fields: { count: counters[port] },
    timestamp,
  }));
}
