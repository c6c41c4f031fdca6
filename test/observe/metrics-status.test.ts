import Ajv2020 from 'ajv/dist/2020';
import { expect } from 'chai';
// a real Prometheus text-format parser (a port of the Python client's), not ours
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { call, eventually } from '../helpers/runtime';
import { startFlow, type Flow } from './flow';

interface Family {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string> }[];
}

async function scrape(flow: Flow): Promise<Family[]> {
  const res = await fetch(`${flow.base}/metrics`);
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusTextFormat(await res.text()) as Family[];
}

/** The value of one series, by its labels (a subset). */
function value(families: Family[], name: string, labels: Record<string, string>): number | undefined {
  const family = families.find((f) => f.name === name);
  const series = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return series?.value === undefined ? undefined : Number(series.value);
}

interface StatusBody {
  version: string;
  uptime_s: number;
  artefacts: Record<string, string[]>;
  instances: {
    kind: string;
    artefact: string;
    instance: string;
    url: string;
    state: string;
    reason: string | null;
    breaker: string | null;
    ports: { port: string; direction: string; events: number; errors: number }[];
  }[];
}

describe('GET /metrics and GET /status', function () {
  this.timeout(15_000);
  let flow: Flow;
  beforeEach(async () => {
    flow = await startFlow();
  });
  afterEach(() => flow.stop());

  const relay = { kind: 'pipeline', artefact: 'relay', instance: 'main' };
  const push = { kind: 'onramp', artefact: 'push', instance: 'main' };
  const keeper = { kind: 'offramp', artefact: 'keeper', instance: 'main' };

  it('counts events per port, errors and bytes as they flow, parsed by a Prometheus text parser', async () => {
    const before = await scrape(flow);
    expect(value(before, 'eddy_port_events_total', { ...relay, port: 'in', direction: 'in' })).to.equal(0);
    expect(before.find((f) => f.name === 'eddy_port_events_total')!.type).to.equal('COUNTER');

    for (let i = 0; i < 7; i++) flow.push({ i });
    flow.pushRaw('{broken');
    await eventually(() => flow.kept.length === 7, 5000, '7 delivered');

    const after = await scrape(flow);
    expect(value(after, 'eddy_port_events_total', { ...push, port: 'out', direction: 'out' })).to.equal(7);
    expect(value(after, 'eddy_port_events_total', { ...push, port: 'err', direction: 'out' })).to.equal(1);
    expect(value(after, 'eddy_port_events_total', { ...relay, port: 'in', direction: 'in' })).to.equal(7);
    expect(value(after, 'eddy_port_events_total', { ...relay, port: 'out', direction: 'out' })).to.equal(7);
    expect(value(after, 'eddy_port_events_total', { ...relay, port: 'err', direction: 'out' })).to.equal(0);
    expect(value(after, 'eddy_port_events_total', { ...keeper, port: 'in', direction: 'in' })).to.equal(7);
    expect(value(after, 'eddy_pipeline_node_events_total', { ...relay, node: 'pass', direction: 'in', port: 'in' })).to.equal(7);
    expect(value(after, 'eddy_pipeline_node_events_total', { ...relay, node: 'pass', direction: 'out', port: 'out' })).to.equal(7);
    expect(value(after, 'eddy_ramp_errors_total', push)).to.equal(1);
    expect(value(after, 'eddy_ramp_bytes_total', { ...push, direction: 'in' })).to.equal('{broken'.length);
    expect(value(after, 'eddy_ramp_bytes_total', { ...keeper, direction: 'out' })).to.equal(7 * '{"i":0}'.length);
    expect(value(after, 'eddy_offramp_in_flight_sends', keeper)).to.equal(0);
    expect(value(after, 'eddy_instance_running', { kind: 'binding', artefact: 'flow', instance: 'main' })).to.equal(1);
    // the process: eddy's own, by prom-client's default names
    expect(value(after, 'process_resident_memory_bytes', {})).to.be.greaterThan(0);
    expect(after.map((f) => f.name)).to.include.members(['nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']);
  });

  it("has the process's own metrics (prom-client's default names and types), the GC histogram once a collection happened", async () => {
    await scrape(flow); // the first scrape starts the event-loop monitor and the GC observer
    // garbage until the GC observer has seen a collection (a positive signal, not a wait)
    let families: Family[] = [];
    const garbage = () => Array.from({ length: 100_000 }, (_, i) => ({ i }));
    await eventually(
      async () => {
        garbage();
        families = await scrape(flow);
        return (families.find((f) => f.name === 'nodejs_gc_duration_seconds')?.metrics.length ?? 0) > 0;
      },
      10_000,
      'a GC in nodejs_gc_duration_seconds',
    );
    const types = Object.fromEntries(families.map((f) => [f.name, f.type]));
    const counters = ['process_cpu_user_seconds_total', 'process_cpu_system_seconds_total', 'process_cpu_seconds_total'];
    const gauges = [
      'process_start_time_seconds',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      ...['p50', 'p90', 'p99', 'min', 'max', 'mean', 'stddev'].map((s) => `nodejs_eventloop_lag_${s}_seconds`),
      'nodejs_heap_size_total_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_external_memory_bytes',
      'nodejs_heap_space_size_total_bytes',
      'nodejs_heap_space_size_used_bytes',
      'nodejs_heap_space_size_available_bytes',
      'nodejs_version_info',
      'nodejs_active_resources',
      'nodejs_active_resources_total',
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      ...(process.platform === 'linux' ? ['process_open_fds', 'process_max_fds', 'process_virtual_memory_bytes', 'process_heap_bytes'] : []),
    ];
    for (const name of counters) expect(types[name], name).to.equal('COUNTER');
    for (const name of gauges) expect(types[name], name).to.equal('GAUGE');
    expect(types.nodejs_gc_duration_seconds).to.equal('HISTOGRAM');

    const cpu = ['user', 'system'].map((k) => value(families, `process_cpu_${k}_seconds_total`, {})!);
    expect(value(families, 'process_cpu_seconds_total', {})).to.be.closeTo(cpu[0] + cpu[1], 1e-6);
    expect(value(families, 'process_start_time_seconds', {})).to.be.closeTo(Date.now() / 1000 - process.uptime(), 5);
    expect(value(families, 'nodejs_heap_size_used_bytes', {})).to.be.greaterThan(0);
    expect(value(families, 'nodejs_heap_space_size_total_bytes', { space: 'old' })).to.be.greaterThan(0);
    const [major, minor, patch] = process.versions.node.split('.');
    expect(value(families, 'nodejs_version_info', { version: process.version, major, minor, patch })).to.equal(1);
    // the scrape's own socket is an active handle
    expect(value(families, 'nodejs_active_handles_total', {})).to.be.greaterThan(0);
    if (process.platform === 'linux') {
      expect(value(families, 'process_open_fds', {})).to.be.greaterThan(0);
      expect(value(families, 'process_max_fds', {})).to.be.at.least(value(families, 'process_open_fds', {})!);
    }
    const gc = families.find((f) => f.name === 'nodejs_gc_duration_seconds')!.metrics[0];
    expect(Number(gc.buckets!['+Inf'])).to.be.greaterThan(0);
  });

  it('shows circuit breakers open and closed, with trigger and restore counts', async () => {
    flow.trigger();
    const open = await scrape(flow);
    expect(value(open, 'eddy_circuit_breaker_open', keeper)).to.equal(1);
    expect(value(open, 'eddy_circuit_breaker_open', push)).to.equal(1);
    expect(value(open, 'eddy_circuit_breaker_triggers_total', push)).to.equal(1);
    expect(value(open, 'eddy_instance_running', keeper)).to.equal(0);
    expect(value(open, 'eddy_instance_running', push)).to.equal(1); // paused, waiting as it should

    const status = (await call(flow.base, 'GET', '/status')).body as StatusBody;
    const byUrl = (url: string) => status.instances.find((i) => i.url === url)!;
    expect(byUrl('/offramp/keeper/main')).to.deep.include({ state: 'down', breaker: 'open', reason: 'the sink is disconnected or full' });
    expect(byUrl('/onramp/push/main')).to.deep.include({ state: 'paused', breaker: 'open', reason: 'circuit breaker held by /offramp/keeper/main' });

    flow.restore();
    const closed = await scrape(flow);
    expect(value(closed, 'eddy_circuit_breaker_open', keeper)).to.equal(0);
    expect(value(closed, 'eddy_circuit_breaker_open', push)).to.equal(0);
    expect(value(closed, 'eddy_circuit_breaker_restores_total', push)).to.equal(1);
    expect(value(closed, 'eddy_circuit_breaker_restores_total', keeper)).to.equal(1);
  });

  it('GET /status has the artefacts, every instance with its state, breaker and cumulative port counts, as its OpenAPI schema says', async () => {
    for (let i = 0; i < 3; i++) flow.push({ i });
    await eventually(() => flow.kept.length === 3, 5000, '3 delivered');
    const reply = await call(flow.base, 'GET', '/status');
    expect(reply.status).to.equal(200);
    expect(reply.type).to.equal('application/json');
    const status = reply.body as StatusBody;
    expect(status.version).to.equal('0.1.0');
    expect(status.uptime_s).to.be.a('number');
    expect(status.artefacts).to.deep.equal({
      pipeline: ['system::passthrough', 'system::metrics', 'relay'],
      onramp: ['push'],
      offramp: ['system::stdout', 'system::stderr', 'keeper'],
      binding: ['flow'],
    });
    const pick = (kind: string, artefact: string) => status.instances.find((i) => i.kind === kind && i.artefact === artefact)!;
    expect(pick('pipeline', 'relay')).to.deep.equal({
      kind: 'pipeline',
      artefact: 'relay',
      instance: 'main',
      url: '/pipeline/relay/main',
      state: 'running',
      reason: null,
      breaker: null,
      ports: [
        { port: 'in', direction: 'in', events: 3, errors: 0 },
        { port: 'out', direction: 'out', events: 3, errors: 0 },
        { port: 'err', direction: 'out', events: 0, errors: 0 },
      ],
      nodes: [{ node: 'pass', type: 'passthrough', in: 3, out: { out: 3 }, dropped: {} }],
      dropped: {},
    });
    expect(pick('onramp', 'push')).to.deep.include({
      breaker: 'closed',
      ports: [
        { port: 'out', direction: 'out', events: 3, errors: 0 },
        { port: 'err', direction: 'out', events: 0, errors: 0 },
      ],
    });
    expect(pick('offramp', 'keeper').ports).to.deep.equal([{ port: 'in', direction: 'in', events: 3, errors: 0 }]);
    expect(pick('binding', 'flow')).to.deep.include({ state: 'running', breaker: null, ports: [] });

    const doc = (await call(flow.base, 'GET', '/openapi.json')).body as {
      components: unknown;
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> }>>;
    };
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ components: doc.components }, 'doc');
    const validate = ajv.getSchema(`doc${doc.paths['/status'].get.responses['200'].content['application/json'].schema.$ref}`)!;
    expect(validate(status), JSON.stringify(validate.errors)).to.equal(true);
    expect(Object.keys(doc.paths['/metrics'].get.responses['200'].content)).to.deep.equal(['text/plain; version=0.0.4; charset=utf-8']);
    expect(Object.keys(doc.paths['/tap/pipeline/{artefact_id}/{instance_id}/{port}'].get.responses['200'].content)).to.deep.equal(['text/event-stream']);
  });
});
