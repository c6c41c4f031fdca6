import { expect } from 'chai';
import { eventually } from '../../helpers/runtime';
import { exampleCopy } from '../../helpers/examples';
import { runExample, type EddyProcess } from '../example-runner';
import { freePort } from '../net-helpers';
import { EXPORT_PATHS, logging, NOT_PROTOBUF, RawClient, tracing } from './helpers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- OTLP JSON read field by field in assertions

describe('examples/otel.yaml', function () {
  this.timeout(30000);
  let eddy: EddyProcess | undefined;
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await eddy?.stop();
    eddy = undefined;
  });

  it('runs: spans and log records from the OpenTelemetry JS exporters are printed as OTLP/JSON lines, a request that is not OTLP goes to stderr', async () => {
    // never the example's 4317: the standard OTLP port, which a local agent or collector may hold
    const port = await freePort('tcp');
    eddy = runExample(exampleCopy('otel.yaml', { 4317: port }));
    const t = tracing(port, { 'service.name': 'example' });
    const l = logging(port, { 'service.name': 'example' });
    closers.push(t.shutdown, l.shutdown);
    const spans = () => eddy!.events().flatMap((e) => ((e as Json).scopeSpans ?? []).flatMap((s: Json) => s.spans));
    const records = () => eddy!.events().flatMap((e) => ((e as Json).scopeLogs ?? []).flatMap((s: Json) => s.logRecords));
    // until the onramp listens: an export before that fails, and the SDK drops it
    await eventually(
      async () => {
        if (spans().length > 0) return true;
        t.tracer.startSpan('hello from the example').end();
        await t.provider.forceFlush().catch(() => new Promise((r) => setTimeout(r, 200)));
        return spans().length > 0;
      },
      20000,
      'a span printed',
    );
    l.logger.emit({ body: 'a log line' });
    await l.provider.forceFlush();
    await eventually(() => records().length === 1, 10000, 'the log record printed');
    expect(spans()[0].name).to.equal('hello from the example');
    expect(spans()[0].traceId).to.match(/^[0-9a-f]{32}$/);
    expect(records()[0].body).to.deep.equal({ stringValue: 'a log line' });

    const raw = new RawClient(port);
    closers.push(() => raw.close());
    expect((await raw.export(EXPORT_PATHS.trace, NOT_PROTOBUF)).error?.code).to.equal(3); // INVALID_ARGUMENT
    await eventually(() => eddy!.stderr().includes('not an OTLP trace export request'), 10000, 'the error on stderr');
    expect(await eddy.stop()).to.equal(0);
    eddy = undefined;
  });
});
