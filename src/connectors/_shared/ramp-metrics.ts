/** Cumulative counters of a ramp, reported as `ramp_events` metrics. */
export class RampCounters {
  in = 0;
  out = 0;
  error = 0;
  bytes = 0;
  /**
   * Not kept by eddy: reads the kernel's count of input it dropped before the
   * onramp read it (`OnrampSource.kernelDrops`); absent for other ramps.
   */
  kernelDrops: (() => number | undefined) | undefined;
  /** sends tried again (an offramp with a `retry` policy; absent for others) */
  retries: number | undefined;
}

/**
 * The metrics events of one ramp flush: `ramp_events` per port in the
 * reference's shape, then `ramp_bytes` (eddy's own): bytes read by an
 * onramp, bytes encoded for sending by an offramp; and `ramp_kernel_drops`
 * for an onramp whose kernel reports what it dropped (udp on Linux).
 */
export function rampMetricEvents(url: string, counters: RampCounters, timestamp: bigint): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = (['in', 'out', 'error'] as const).map((port) => ({
    measurement: 'ramp_events',
    tags: { ramp: url, port },
    fields: { count: counters[port] },
    timestamp,
  }));
  events.push({ measurement: 'ramp_bytes', tags: { ramp: url }, fields: { count: counters.bytes }, timestamp });
  const drops = counters.kernelDrops?.();
  if (drops !== undefined) events.push({ measurement: 'ramp_kernel_drops', tags: { ramp: url }, fields: { count: drops }, timestamp });
  if (counters.retries !== undefined) events.push({ measurement: 'ramp_retries', tags: { ramp: url }, fields: { count: counters.retries }, timestamp });
  return events;
}
