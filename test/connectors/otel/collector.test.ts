import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import { PrivateService } from '../../helpers/private-service';
import { eventually } from '../../helpers/runtime';
import { freePort, recordingLogger } from '../net-helpers';
import { attributes, logging, metering, otelFlow, signalOf, tracing, type OtelFlow } from './helpers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- OTLP JSON read field by field in assertions

const serviceName = (e: EddyEvent) => (attributes((e.data as Json).resource?.attributes)['service.name'] as { stringValue?: string } | undefined)?.stringValue;

/**
 * The otel onramp receiving from a real OpenTelemetry Collector (v0.150.0,
 * built by scripts/services.d/otelcol.sh): the OpenTelemetry JS exporters
 * send to the collector's otlp receiver, and its otlp_grpc exporter (gzip
 * compression, retries, honouring RetryInfo) sends on to eddy.
 *
 * Each test has a collector of its own (own ports, config and log, started
 * by scripts/services.d/otelcol.sh), exporting to that test's onramp: the
 * shared collector is never reconfigured or signalled.
 */
describe('otel onramp behind a real OpenTelemetry Collector (a private one per test)', function () {
  this.timeout(60000);
  let collector: PrivateService | undefined;
  let flow: OtelFlow | undefined;
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await flow?.stop();
    flow = undefined;
    await collector?.dispose();
    collector = undefined;
  });

  /**
   * Starts the onramp on a free port, then a collector exporting to it:
   * started after the onramp, the collector's exporter connects at once (a
   * gRPC channel that found nothing listening backs off, up to 2 minutes
   * between attempts).
   */
  async function startBehindCollector(ctx: Mocha.Context) {
    const logger = recordingLogger();
    const port = await freePort();
    flow = await otelFlow({ host: '127.0.0.1', port }, { logger });
    collector = await PrivateService.start(ctx, 'otelcol', { exportPort: port });
    return { flow, logger, collector: collector.address, port };
  }

  it('traces, logs and metrics sent to the collector arrive through its otlp exporter, one event per resource', async function () {
    const { flow, collector, port } = await startBehindCollector(this);
    // this test's own service name: only its own events count
    const run = `eddy-collector-${process.pid}-${Date.now().toString(36)}`;
    const t = tracing(collector.port, { 'service.name': run }, collector.host);
    const l = logging(collector.port, { 'service.name': run }, collector.host);
    const m = metering(collector.port, { 'service.name': run }, collector.host);
    closers.push(t.shutdown, l.shutdown, m.shutdown);

    const span = t.tracer.startSpan('through the collector', { attributes: { hop: 2 } });
    span.end();
    l.logger.emit({ body: 'logged through the collector', severityText: 'INFO' });
    m.meter.createUpDownCounter('queue.depth').add(-3);
    await Promise.all([t.provider.forceFlush(), l.provider.forceFlush(), m.flush()]);

    const ours = () => flow.collected.out.filter((e) => serviceName(e) === run);
    const bySignal = (signal: string) => ours().filter((e) => signalOf(e) === signal);
    await eventually(() => ['trace', 'logs', 'metrics'].every((s) => bySignal(s).length >= 1), 30000, 'a trace, a logs and a metrics event of this run');
    expect(flow.collected.err).to.deep.equal([]);

    const [spanEvent] = bySignal('trace');
    const sent = (spanEvent.data as Json).scopeSpans[0].spans[0];
    expect(sent).to.include({ name: 'through the collector', traceId: span.spanContext().traceId, spanId: span.spanContext().spanId });
    expect(attributes(sent.attributes)).to.deep.equal({ hop: { intValue: '2' } });
    const record = (bySignal('logs')[0].data as Json).scopeLogs[0].logRecords[0];
    expect(record).to.deep.include({ body: { stringValue: 'logged through the collector' }, severityText: 'INFO' });
    const metric = (bySignal('metrics')[0].data as Json).scopeMetrics[0].metrics.find((x: Json) => x.name === 'queue.depth');
    // false is proto3's default: the collector's encoder leaves it out, and so does the event
    expect(metric.sum).to.not.have.property('isMonotonic');
    expect(metric.sum.aggregationTemporality).to.equal(2);
    expect(metric.sum.dataPoints[0].asDouble).to.equal(-3);
    expect(spanEvent.originUri).to.match(new RegExp(`^svc-otel://127\\.0\\.0\\.1:\\d+/${port}/trace$`));
  });

  it('while the breaker is triggered the collector is refused UNAVAILABLE, retries after the RetryInfo delay, and gets every span through once it restores', async function () {
    const { flow, logger, collector } = await startBehindCollector(this);
    const breaker = flow.runtime.onramp(flow.url)!.runtime.breaker;
    breaker.trigger('/test/holder');
    const run = `eddy-collector-cb-${process.pid}-${Date.now().toString(36)}`;
    const t = tracing(collector.port, { 'service.name': run }, collector.host);
    closers.push(t.shutdown);
    for (const name of ['s1', 's2', 's3']) t.tracer.startSpan(name).end();
    await t.provider.forceFlush();

    // the collector accepted them, and its exporter is refused and tries again: at least two refusals of one export
    const refusals = () => logger.lines.filter((line) => line.includes('refused a trace export')).length;
    await eventually(() => refusals() >= 4, 30000, 'the collector refused and retrying');
    expect(flow.collected.out.filter((e) => serviceName(e) === run)).to.deep.equal([]);

    breaker.restore('/test/holder');
    const names = () =>
      flow.collected.out
        .filter((e) => serviceName(e) === run)
        .flatMap((e) => (e.data as Json).scopeSpans.flatMap((s: Json) => s.spans))
        .map((s: Json) => s.name);
    await eventually(() => names().length >= 3, 30000, 'the three spans after the restore');
    // no late duplicate: the collector's exporter sends one request at a time, retrying it until it is through
    // (scripts/services.d/otelcol.sh), so once a sentinel span sent after them arrives, every retry of s1..s3 is over
    t.tracer.startSpan('sentinel').end();
    await t.provider.forceFlush();
    await eventually(() => names().includes('sentinel'), 30000, 'the sentinel span');
    const all = names();
    expect(all[all.length - 1], 'the sentinel is the last span').to.equal('sentinel');
    expect(all.slice(0, -1).sort()).to.deep.equal(['s1', 's2', 's3']);
    expect(logger.lines.some((line) => /refused \d+ export requests \(UNAVAILABLE\) while not reading/.test(line))).to.equal(true);
  });
});
