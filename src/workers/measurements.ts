/**
 * A blackhole's finished measurement, passed to the primary when the
 * process is a worker (`--workers N`: the worker's runtime has an
 * `onMeasurement` that sends it), so the primary can print one combined
 * report: events summed, histograms merged. In one process nothing collects
 * measurements.
 */
import type * as Hdr from 'hdr-histogram-js';
import type { BlackholeReport } from '../connectors/blackhole/offramp';

/**
 * The package's index (its encoders, pako and its WebAssembly build: ~10 MB
 * of RSS), loaded only where histograms cross processes: in a worker that
 * publishes, in the primary that merges.
 */
const hdrIndex = (): typeof Hdr => require('hdr-histogram-js') as typeof Hdr; // eslint-disable-line @typescript-eslint/no-require-imports -- see above: loaded only where histograms cross processes

/** A histogram as it crosses processes: hdr-histogram-js's compressed base64. */
export function encodeHistogram(histogram: Hdr.Histogram): string {
  return hdrIndex().encodeIntoCompressedBase64(histogram);
}

/** What the primary prints: the blackhole's report over every worker, plus each worker's own figures. */
export interface CombinedReport extends BlackholeReport {
  /** how many workers measured */
  workers: number;
  /** peak RSS of every worker and the primary together (`peak_rss_bytes` is the largest worker's) */
  peak_rss_bytes_total: number;
  per_worker: { worker: number; events: number; events_per_second: number; p99: number; peak_rss_bytes: number }[];
}

/**
 * Combines the workers' measurements of one blackhole: counts and rates
 * summed (the workers measured side by side over windows of the same
 * length), latency from the merged histograms.
 */
export function combineMeasurements(parts: { worker: number; report: BlackholeReport; histogram: string }[], primaryRssBytes: number): CombinedReport {
  const hdr = hdrIndex();
  const merged = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000_000, numberOfSignificantValueDigits: 3, useWebAssembly: false });
  for (const p of parts) merged.add(hdr.decodeFromCompressedBase64(p.histogram, 32, false));
  const sum = (f: (r: BlackholeReport) => number) => parts.reduce((n, p) => n + f(p.report), 0);
  return {
    events: sum((r) => r.events),
    bytes: sum((r) => r.bytes),
    seconds: Math.max(...parts.map((p) => p.report.seconds)),
    events_per_second: sum((r) => r.events_per_second),
    megabytes_per_second: sum((r) => r.megabytes_per_second),
    latency_ns: {
      p50: merged.getValueAtPercentile(50),
      p90: merged.getValueAtPercentile(90),
      p99: merged.getValueAtPercentile(99),
      p999: merged.getValueAtPercentile(99.9),
      max: merged.maxValue,
      mean: Math.round(merged.mean),
    },
    peak_rss_bytes: Math.max(...parts.map((p) => p.report.peak_rss_bytes)),
    peak_rss_bytes_total: sum((r) => r.peak_rss_bytes) + primaryRssBytes,
    workers: parts.length,
    per_worker: parts
      .map((p) => ({
        worker: p.worker,
        events: p.report.events,
        events_per_second: p.report.events_per_second,
        p99: p.report.latency_ns.p99,
        peak_rss_bytes: p.report.peak_rss_bytes,
      }))
      .sort((a, b) => a.worker - b.worker),
  };
}
