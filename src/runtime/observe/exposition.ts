/**
 * The Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): what GET /metrics
 * writes. eddy's own since issue 26 (it was prom-client's), and only the part eddy
 * needs: counters, gauges and histograms, with labels, no timestamps.
 */

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Readonly<Record<string, string>>;

const LABEL_ESCAPES = /[\\"\n]/;

/** A label value inside its double quotes: backslash, double quote and newline escaped, the rest as it is. */
function escapeLabelValue(value: string): string {
  // most values need nothing: a test is cheaper than a replace (this runs for every label of every series)
  return LABEL_ESCAPES.test(value) ? value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`)) : value;
}

/** HELP text: backslash and newline escaped (a double quote stays as it is there). */
function escapeHelp(help: string): string {
  return help.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** A sample value as Prometheus (Go's ParseFloat) reads it: +Inf, -Inf, NaN spelled its way; `1e+21`, `5e-7` are fine as JS writes them. */
export function formatValue(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value); // NaN is 'NaN' in both
}

/** `{name="value",…}`, or nothing without labels. */
function labelBlock(labels: Labels): string {
  let block = '';
  for (const name in labels) block += `${block === '' ? '{' : ','}${name}="${escapeLabelValue(labels[name])}"`;
  return block === '' ? '' : `${block}}`;
}

function header(name: string, help: string, type: string): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
}

/**
 * A counter or gauge family being written: one sample per label set. The same label
 * set twice adds up for a counter and keeps the last value for a gauge (a family
 * never writes a series twice, which Prometheus would reject as a duplicate).
 */
export class Family {
  private readonly samples = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge',
  ) {}

  sample(labels: Labels, value: number): this {
    const key = labelBlock(labels);
    this.samples.set(key, this.type === 'counter' ? (this.samples.get(key) ?? 0) + value : value);
    return this;
  }

  /** HELP and TYPE even without samples: the family is there, with no series yet. */
  write(): string {
    let text = header(this.name, this.help, this.type);
    for (const [labels, value] of this.samples) text += `${this.name}${labels} ${formatValue(value)}\n`;
    return text;
  }
}

/** One series of a histogram: counts per upper bound (not cumulative), their sum and total. */
interface HistogramSeries {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram that lives across scrapes (it observes; each scrape writes what it has so far). */
export class Histogram {
  private readonly series = new Map<string, HistogramSeries>();

  /** `bounds`: the upper bounds, ascending; +Inf is added. */
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = labelBlock(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, counts: this.bounds.map(() => 0), sum: 0, count: 0 }));
    const bucket = this.bounds.findIndex((bound) => value <= bound);
    if (bucket !== -1) s.counts[bucket]++;
    s.sum += value;
    s.count++;
  }

  write(): string {
    let text = header(this.name, this.help, 'histogram');
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += s.counts[i];
        text += `${this.name}_bucket${labelBlock({ ...s.labels, le: formatValue(bound) })} ${cumulative}\n`;
      });
      const labels = labelBlock(s.labels);
      text += `${this.name}_bucket${labelBlock({ ...s.labels, le: '+Inf' })} ${s.count}\n`;
      text += `${this.name}_sum${labels} ${formatValue(s.sum)}\n`;
      text += `${this.name}_count${labels} ${s.count}\n`;
    }
    return text;
  }
}
