import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { ObservedInstance } from './observe';

export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * The process's own metrics (memory, CPU, event-loop lag, GC), prom-client's
 * defaults, registered once per process: they describe the process, not a
 * runtime, and the event-loop monitor they start is meant to run once.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
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
  private readonly registry = new Registry();
  private readonly events = this.counter('eddy_port_events_total', 'Events through a port: direction in = entering the instance, out = leaving it', [
    ...INSTANCE,
    'port',
    'direction',
  ]);
  private readonly errors = this.counter('eddy_ramp_errors_total', 'Onramp: input that could not be decoded; offramp: events that could not be encoded or sent', INSTANCE);
  private readonly bytes = this.counter('eddy_ramp_bytes_total', 'Onramp: bytes read (direction in); offramp: bytes encoded for sending (direction out)', [
    ...INSTANCE,
    'direction',
  ]);
  private readonly breakerOpen = this.gauge(
    'eddy_circuit_breaker_open',
    '1 while the circuit breaker is open: an onramp paused, an offramp holding its sources back; 0 when closed',
    INSTANCE,
  );
  private readonly breakerTriggers = this.counter('eddy_circuit_breaker_triggers_total', 'How often the circuit breaker opened', INSTANCE);
  private readonly breakerRestores = this.counter('eddy_circuit_breaker_restores_total', 'How often the circuit breaker closed again', INSTANCE);
  private readonly inFlight = this.gauge('eddy_offramp_in_flight_sends', 'Sends handed to the sink that have not settled yet', INSTANCE);
  private readonly up = this.gauge('eddy_instance_running', '1 while the instance runs (paused by its circuit breaker counts), 0 when down or failed', INSTANCE);

  /** The exposition text of `observed` (one snapshot of the instances) and of the process. */
  async scrape(observed: ObservedInstance[]): Promise<string> {
    this.registry.resetMetrics();
    for (const o of observed) {
      const at = { kind: o.kind, artefact: o.artefact, instance: o.instance };
      for (const p of o.ports) this.events.inc({ ...at, port: p.port, direction: p.direction }, p.events);
      this.up.set(at, o.state === 'running' || o.state === 'paused' ? 1 : 0);
      if (o.errors !== undefined) this.errors.inc(at, o.errors);
      if (o.bytes !== undefined) this.bytes.inc({ ...at, direction: o.bytes.direction }, o.bytes.count);
      if (o.breaker !== null) this.breakerOpen.set(at, o.breaker === 'open' ? 1 : 0);
      if (o.breakerCounts !== undefined) {
        this.breakerTriggers.inc(at, o.breakerCounts.trigger);
        this.breakerRestores.inc(at, o.breakerCounts.restore);
      }
      if (o.inFlight !== undefined) this.inFlight.set(at, o.inFlight);
    }
    // both read synchronously when called, so a concurrent scrape cannot mix snapshots
    const [own, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${own}\n${process}`;
  }

  private counter<T extends string>(name: string, help: string, labelNames: readonly T[]): Counter<T> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge<T extends string>(name: string, help: string, labelNames: readonly T[]): Gauge<T> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }
}
