import { Family, type Labels } from './exposition';
import type { ObservedInstance } from './observe';
import { processMetrics } from './process-metrics';

export { PROMETHEUS_CONTENT_TYPE } from './exposition';

/**
 * GET /metrics in the Prometheus text format. Nothing is counted for it: each
 * scrape writes one snapshot of the instances (`Runtime.observe`, the counters the
 * flow keeps anyway), so an instance that stopped leaves the output with its series.
 */
export class PrometheusExporter {
  /** The exposition text of `observed` (one snapshot of the instances) and of the process. */
  async scrape(observed: ObservedInstance[]): Promise<string> {
    // the families are this scrape's own and written before anything awaits: a concurrent scrape cannot mix snapshots
    const runtime = new RuntimeMetrics(observed).write();
    return runtime + (await processMetrics());
  }
}

const counter = (name: string, help: string) => new Family(name, help, 'counter');
const gauge = (name: string, help: string) => new Family(name, help, 'gauge');

/** One scrape's metrics of a runtime: fresh families each time, so scrapes share nothing. */
class RuntimeMetrics {
  readonly events = counter('eddy_port_events_total', 'Events through a port: direction in = entering the instance, out = leaving it');
  readonly errors = counter('eddy_ramp_errors_total', 'Onramp: input that could not be decoded; offramp: events that could not be encoded or sent');
  readonly bytes = counter('eddy_ramp_bytes_total', 'Onramp: bytes read (direction in); offramp: bytes encoded for sending (direction out)');
  readonly breakerOpen = gauge(
    'eddy_circuit_breaker_open',
    '1 while the circuit breaker is open: an onramp paused, an offramp holding its sources back; 0 when closed',
  );
  readonly breakerTriggers = counter('eddy_circuit_breaker_triggers_total', 'How often the circuit breaker opened');
  readonly breakerRestores = counter('eddy_circuit_breaker_restores_total', 'How often the circuit breaker closed again');
  readonly connectionsClosed = counter(
    'eddy_onramp_connections_closed_total',
    'Connections an onramp closed itself, by reason (unread_replies: a linked ws client that did not read its replies)',
  );
  readonly inFlight = gauge('eddy_offramp_in_flight_sends', 'Sends handed to the sink that have not settled yet');
  readonly kernelDrops = counter(
    'eddy_onramp_kernel_drops_total',
    "Onramp: input the kernel dropped before the onramp read it (a udp socket's full receive buffer; Linux's /proc/net/udp drops)",
  );
  readonly nodeEvents = counter(
    'eddy_pipeline_node_events_total',
    'Events through a pipeline node: direction in = reaching the node, out = emitted on a port a link takes',
  );
  readonly nodeDropped = counter(
    'eddy_pipeline_node_dropped_total',
    'Events a pipeline node dropped and acked to their sources, by reason: filter, unlinked:<port> (a port no link takes); node "" = an interface output no binding links',
  );
  readonly nodePartitions = gauge('eddy_pipeline_node_partitions', 'A stateful pipeline node: the source partitions it holds state for');
  readonly nodeWatermark = gauge('eddy_pipeline_node_watermark_ms', 'An event-time pipeline node: the watermark of a source partition, ms since the epoch');
  readonly up = gauge('eddy_instance_running', '1 while the instance runs (paused by its circuit breaker counts), 0 when down or failed');

  constructor(observed: ObservedInstance[]) {
    for (const o of observed) {
      const at: Labels = { kind: o.kind, artefact: o.artefact, instance: o.instance };
      for (const p of o.ports) this.events.sample({ ...at, port: p.port, direction: p.direction }, p.events);
      this.up.sample(at, o.state === 'running' || o.state === 'paused' ? 1 : 0);
      if (o.errors !== undefined) this.errors.sample(at, o.errors);
      if (o.bytes !== undefined) this.bytes.sample({ ...at, direction: o.bytes.direction }, o.bytes.count);
      if (o.breaker !== null) this.breakerOpen.sample(at, o.breaker === 'open' ? 1 : 0);
      if (o.breakerCounts !== undefined) {
        this.breakerTriggers.sample(at, o.breakerCounts.trigger);
        this.breakerRestores.sample(at, o.breakerCounts.restore);
      }
      if (o.inFlight !== undefined) this.inFlight.sample(at, o.inFlight);
      for (const [reason, n] of Object.entries(o.closedConnections ?? {})) this.connectionsClosed.sample({ ...at, reason }, n);
      if (o.kernelDrops !== undefined) this.kernelDrops.sample(at, o.kernelDrops);
      for (const n of o.nodes ?? []) {
        this.nodeEvents.sample({ ...at, node: n.node, direction: 'in', port: 'in' }, n.in);
        for (const [port, events] of Object.entries(n.out)) this.nodeEvents.sample({ ...at, node: n.node, direction: 'out', port }, events);
        for (const [reason, events] of Object.entries(n.dropped)) this.nodeDropped.sample({ ...at, node: n.node, reason }, events);
        if (n.partitions) this.nodePartitions.sample({ ...at, node: n.node }, n.partitions.length);
        for (const [partition, ms] of Object.entries(n.watermarks ?? {})) this.nodeWatermark.sample({ ...at, node: n.node, partition }, ms);
      }
      for (const [reason, events] of Object.entries(o.dropped ?? {})) this.nodeDropped.sample({ ...at, node: '', reason }, events);
    }
  }

  /** The families in the order they were declared (the order eddy has always written them in). */
  write(): string {
    return [
      this.events,
      this.errors,
      this.bytes,
      this.breakerOpen,
      this.breakerTriggers,
      this.breakerRestores,
      this.connectionsClosed,
      this.inFlight,
      this.kernelDrops,
      this.nodeEvents,
      this.nodeDropped,
      this.nodePartitions,
      this.nodeWatermark,
      this.up,
    ]
      .map((f) => f.write())
      .join('');
  }
}
