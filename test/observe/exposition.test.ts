import { expect } from 'chai';
import fc from 'fast-check';
// a real Prometheus text-format parser (a port of the Python client's), not ours
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Family, Histogram, formatValue } from '../../src/runtime/observe/exposition';
import type { ObservedInstance } from '../../src/runtime/observe/observe';
import { PrometheusExporter } from '../../src/runtime/observe/prometheus';

interface ParsedFamily {
  name: string;
  help: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[];
}
const parse = (text: string) => parsePrometheusTextFormat(text) as ParsedFamily[];

/** A sample value as Prometheus reads it (Go's ParseFloat, which knows +Inf where JS's Number does not). */
const readValue = (s: string) => (s === '+Inf' ? Infinity : s === '-Inf' ? -Infinity : Number(s));

/** Any text: every code point (lone surrogates too), with the characters the format escapes (and its delimiters) made frequent. */
const text = fc.string({
  unit: fc.oneof(fc.constantFrom('"', '\\', '\n', '\r', '\t', ' ', '{', '}', ',', '=', '#', 'n'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
  maxLength: 30,
});

describe('the Prometheus text exposition format (exposition.ts), read back by a real parser', () => {
  it('label values of any text come back as they were, with the series apart', () => {
    fc.assert(
      fc.property(fc.uniqueArray(text, { minLength: 1, maxLength: 5 }), text, (values, other) => {
        const family = new Family('eddy_test_total', 'a help', 'counter');
        values.forEach((v, i) => family.sample({ artefact: v, other, n: String(i) }, i));
        const [parsed] = parse(family.write());
        expect(parsed).to.include({ name: 'eddy_test_total', type: 'COUNTER' });
        expect(parsed.metrics).to.deep.equal(values.map((v, i) => ({ labels: { artefact: v, other, n: String(i) }, value: String(i) })));
      }),
      { numRuns: 300 },
    );
  });

  it('HELP text of any text comes back as it was (backslash and newline escaped)', () => {
    // the parser trims each line, so the help ends in a visible character here
    fc.assert(
      fc.property(text, (help) => {
        const family = new Family('eddy_test', `${help}.`, 'gauge').sample({}, 1);
        const parsed = parse(family.write());
        expect(parsed).to.have.length(1);
        expect(parsed[0]).to.include({ name: 'eddy_test', help: `${help}.`, type: 'GAUGE' });
      }),
      { numRuns: 300 },
    );
  });

  it('any double, ±Inf and NaN, is written as Prometheus reads it and reads back as the same number', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.constantFrom(Infinity, -Infinity, NaN, -0, 1e21, 5e-7)), (n) => {
        const written = formatValue(n);
        // Go's ParseFloat syntax, as Prometheus accepts it (no JS-only forms such as 'Infinity')
        expect(written).to.match(/^(?:[+-]Inf|NaN|-?\d+(?:\.\d+)?(?:e[+-]\d+)?)$/);
        const [parsed] = parse(new Family('eddy_n', 'n', 'gauge').sample({}, n).write());
        const back = readValue(parsed.metrics[0].value!);
        if (Number.isNaN(n)) expect(back).to.be.NaN;
        else expect(back).to.equal(n === 0 ? 0 : n);
      }),
    );
  });

  it('a counter adds up a label set seen twice, a gauge keeps the last value: no series is written twice', () => {
    const counter = new Family('eddy_c_total', 'c', 'counter').sample({ a: '1' }, 2).sample({ a: '1' }, 3).sample({ a: '2' }, 1);
    const gauge = new Family('eddy_g', 'g', 'gauge').sample({ a: '1' }, 2).sample({ a: '1' }, 3);
    const [c, g] = parse(counter.write() + gauge.write());
    expect(c.metrics).to.deep.equal([
      { labels: { a: '1' }, value: '5' },
      { labels: { a: '2' }, value: '1' },
    ]);
    expect(g.metrics).to.deep.equal([{ labels: { a: '1' }, value: '3' }]);
  });

  it('a family without samples still says its HELP and TYPE', () => {
    expect(parse(new Family('eddy_none_total', 'nothing yet', 'counter').write())).to.deep.equal([
      { name: 'eddy_none_total', help: 'nothing yet', type: 'COUNTER', metrics: [] },
    ]);
  });

  it('a histogram writes cumulative buckets up to +Inf, its sum and count', () => {
    const h = new Histogram('eddy_h_seconds', 'h', [0.1, 1]);
    for (const v of [0.25, 0.1, 0.5, 3]) h.observe({}, v);
    const [parsed] = parse(h.write());
    expect(parsed.type).to.equal('HISTOGRAM');
    expect(parsed.metrics).to.deep.equal([{ buckets: { '0.1': '1', '1': '3', '+Inf': '4' }, sum: '3.85', count: '4' }]);
  });

  it('a histogram writes each label set as a series of its own', () => {
    // the parser folds a labelled histogram's series into one, so the text itself is checked here
    const h = new Histogram('eddy_h_seconds', 'h', [1]);
    h.observe({ kind: 'a"b' }, 0.5);
    h.observe({ kind: 'c' }, 2);
    h.observe({ kind: 'a"b' }, 1.5);
    expect(h.write()).to.equal(
      [
        '# HELP eddy_h_seconds h',
        '# TYPE eddy_h_seconds histogram',
        'eddy_h_seconds_bucket{kind="a\\"b",le="1"} 1',
        'eddy_h_seconds_bucket{kind="a\\"b",le="+Inf"} 2',
        'eddy_h_seconds_sum{kind="a\\"b"} 2',
        'eddy_h_seconds_count{kind="a\\"b"} 2',
        'eddy_h_seconds_bucket{kind="c",le="1"} 0',
        'eddy_h_seconds_bucket{kind="c",le="+Inf"} 1',
        'eddy_h_seconds_sum{kind="c"} 2',
        'eddy_h_seconds_count{kind="c"} 1',
        '',
      ].join('\n'),
    );
  });
});

describe('PrometheusExporter', () => {
  const instance = (artefact: string, events: number): ObservedInstance => ({
    kind: 'pipeline',
    artefact,
    instance: 'main',
    url: `/pipeline/${artefact}/main`,
    state: 'running',
    reason: null,
    breaker: null,
    ports: [{ port: 'in', direction: 'in', events, errors: 0 }],
  });

  it('concurrent scrapes each write their own snapshot, never one mixed with the other', async () => {
    const exporter = new PrometheusExporter();
    const snapshots = Array.from({ length: 8 }, (_, i) => [instance(`p${i}`, i), instance('shared', 100 + i)]);
    const texts = await Promise.all(snapshots.map((s) => exporter.scrape(s)));
    texts.forEach((text, i) => {
      const events = parse(text).find((f) => f.name === 'eddy_port_events_total')!;
      expect(events.metrics.map((m) => [m.labels!.artefact, m.value])).to.deep.equal([
        [`p${i}`, String(i)],
        ['shared', String(100 + i)],
      ]);
    });
  });
});
