import type * as PromClient from 'prom-client';
import type { ObservedInstance } from './observe';

/** prom-client's Registry.PROMETHEUS_CONTENT_TYPE, known before prom-client is loaded */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** prom-client is loaded on the first scrape, not with the API: an eddy nobody scrapes starts without it. */
let promClient: Promise<typeof PromClient> | undefined;
const loadPromClient = () => (promClient ??= import('prom-client'));

/**
 * The process's own metrics (memory, CPU, event-loop lag, GC), prom-client's
 * defaults, registered once per process: they describe the process, not a
 * runtime, and the event-loop monitor they start is meant to run once.
 */
let processRegistry: PromClient.Registry | undefined;
function processMetrics(prom: typeof PromClient): PromClient.Registry {
  if (!processRegistry) {
    processRegistry = new prom.Registry();
    prom.collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const INSTANCE = ['kind', 'artefact', 'instance'] as const;

/**
 * GET /metrics in the Prometheus text format. Nothing is counted for it:
 * each scrape takes one snapshot of the instances (`Runtime.observe`, the
 * counters the flow keeps anyway) and sets the metrics from it, so an
 * instance that stopped leaves the output with its series.
 */
export class PrometheusExporter {
  private metrics: RuntimeMetrics | undefined;

  /** The exposition text of `observed` (one snapshot of the instances) and of the process. */
  async scrape(observed: ObservedInstance[]): Promise<string> {
    const prom = await loadPromClient();
    const m = (this.metrics ??= new RuntimeMetrics(prom));
    // from here on nothing awaits until both registries have been read, so a concurrent scrape cannot mix snapshots
    m.registry.resetMetrics();
    for (const o of observed) {
      const at = { kind: o.kind, artefact: o.artefact, instance: o.instance };
      for (const p of o.ports) m.events.inc({ ...at, port: p.port, direction: p.direction }, p.events);
      m.up.set(at, o.state === 'running' || o.state === 'paused' ? 1 : 0);
      if (o.errors !== undefined) m.errors.inc(at, o.errors);
      if (o.bytes !== undefined) m.bytes.inc({ ...at, direction: o.bytes.direction }, o.bytes.count);
      if (o.breaker !== null) m.breakerOpen.set(at, o.breaker === 'open' ? 1 : 0);
      if (o.breakerCounts !== undefined) {
        m.breakerTriggers.inc(at, o.breakerCounts.trigger);
        m.breakerRestores.inc(at, o.breakerCounts.restore);
      }
      if (o.inFlight !== undefined) m.inFlight.set(at, o.inFlight);
      for (const [reason, n] of Object.entries(o.closedConnections ?? {})) m.connectionsClosed.inc({ ...at, reason }, n);
      if (o.kernelDrops !== undefined) m.kernelDrops.inc(at, o.kernelDrops);
    }
    const [own, process] = await Promise.all([m.registry.metrics(), processMetrics(prom).metrics()]);
    return `${own}\n${process}`;
  }
}

/** The metrics of one runtime, in a registry of their own (several runtimes can share a process). */
class RuntimeMetrics {
  readonly registry: PromClient.Registry;
  readonly events;
  readonly errors;
  readonly bytes;
  readonly breakerOpen;
  readonly breakerTriggers;
  readonly breakerRestores;
  readonly inFlight;
  readonly connectionsClosed;
  readonly kernelDrops;
  readonly up;

  constructor(private readonly prom: typeof PromClient) {
    this.registry = new prom.Registry();
    this.events = this.counter('eddy_port_events_total', 'Events through a port: direction in = entering the instance, out = leaving it', [
      ...INSTANCE,
      'port',
      'direction',
    ]);
    this.errors = this.counter(
      'eddy_ramp_errors_total',
      'Onramp: input that could not be decoded; offramp: events that could not be encoded or sent',
      INSTANCE,
    );
    this.bytes = this.counter('eddy_ramp_bytes_total', 'Onramp: bytes read (direction in); offramp: bytes encoded for sending (direction out)', [
      ...INSTANCE,
      'direction',
    ]);
    this.breakerOpen = this.gauge(
      'eddy_circuit_breaker_open',
      '1 while the circuit breaker is open: an onramp paused, an offramp holding its sources back; 0 when closed',
      INSTANCE,
    );
    this.breakerTriggers = this.counter('eddy_circuit_breaker_triggers_total', 'How often the circuit breaker opened', INSTANCE);
    this.breakerRestores = this.counter('eddy_circuit_breaker_restores_total', 'How often the circuit breaker closed again', INSTANCE);
    this.connectionsClosed = this.counter(
      'eddy_onramp_connections_closed_total',
      'Connections an onramp closed itself, by reason (unread_replies: a linked ws client that did not read its replies)',
      [...INSTANCE, 'reason'],
    );
    this.inFlight = this.gauge('eddy_offramp_in_flight_sends', 'Sends handed to the sink that have not settled yet', INSTANCE);
    this.kernelDrops = this.counter(
      'eddy_onramp_kernel_drops_total',
      "Onramp: input the kernel dropped before the onramp read it (a udp socket's full receive buffer; Linux's /proc/net/udp drops)",
      INSTANCE,
    );
    this.up = this.gauge('eddy_instance_running', '1 while the instance runs (paused by its circuit breaker counts), 0 when down or failed', INSTANCE);
  }

  private counter<T extends string>(name: string, help: string, labelNames: readonly T[]): PromClient.Counter<T> {
    return new this.prom.Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge<T extends string>(name: string, help: string, labelNames: readonly T[]): PromClient.Gauge<T> {
    return new this.prom.Gauge({ name, help, labelNames, registers: [this.registry] });
  }
}
