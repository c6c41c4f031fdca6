import type { OnrampInstance } from '../instances';
import type { OfframpRuntime } from '../../ramps/offramp';
import type { PipelineRuntime } from '../../pipeline/pipeline';
import type { Kind } from '../urls';
import type { NodeStats } from '../../pipeline/accounting';

export type { NodeStats };

/** Events through one port of an instance, cumulative. */
export interface PortStats {
  port: string;
  /** `in`: events entering the instance at this port; `out`: events leaving it */
  direction: 'in' | 'out';
  events: number;
  errors: number;
}

/**
 * What /status and /metrics report of one instance, read from the
 * runtime's own counters at the time of the call (no per-event work). It is
 * plain data, so instances running elsewhere (a worker process) can be
 * reported in the same shape.
 */
export interface ObservedInstance {
  kind: Kind;
  artefact: string;
  instance: string;
  /** `/kind/artefact/instance` */
  url: string;
  state: 'running' | 'paused' | 'down' | 'failed';
  reason: string | null;
  /** `open`: an onramp paused by its circuit breaker, an offramp holding its sources back; null for pipelines and bindings */
  breaker: 'open' | 'closed' | null;
  ports: PortStats[];
  /** ramps: errors (onramp: undecodable input; offramp: failed encodes and sends) */
  errors?: number;
  /** ramps: bytes read (onramp, `in`) or encoded for sending (offramp, `out`) */
  bytes?: { direction: 'in' | 'out'; count: number };
  /** ramps: how often the breaker opened (`trigger`) and closed again (`restore`) */
  breakerCounts?: { trigger: number; restore: number };
  /** offramps: sends handed to the sink and not settled yet */
  inFlight?: number;
  /** onramps that close connections themselves: how many they closed, by reason (the linked ws onramp's `unread_replies`) */
  closedConnections?: Record<string, number>;
  /** onramps whose kernel says so (udp on Linux): input it dropped before the onramp read it (a full socket receive buffer) */
  kernelDrops?: number;
  /** pipelines: what each node did with the events that reached it: in, out per linked port, dropped per reason */
  nodes?: NodeStats[];
  /** pipelines: events dropped at an interface output no binding links, by `unlinked:<output>` */
  dropped?: Record<string, number>;
}

/** A live instance, as the runtime keeps it. */
export type LiveInstance =
  | { kind: 'onramp'; onramp: OnrampInstance }
  | { kind: 'offramp'; offramp: OfframpRuntime }
  | { kind: 'pipeline'; pipeline: PipelineRuntime }
  | { kind: 'binding' };

/** The counters and states of one instance; `health` is what the runtime's health check says of it. */
export function observeInstance(
  at: { kind: Kind; artefact: string; instance: string; url: string },
  live: LiveInstance,
  health: { state: ObservedInstance['state']; reason?: string },
): ObservedInstance {
  const base = { ...at, state: health.state, reason: health.reason ?? null };
  switch (live.kind) {
    case 'onramp': {
      const { counters, breaker } = live.onramp.runtime;
      const closedConnections = live.onramp.runtime.closedConnections();
      const kernelDrops = counters.kernelDrops?.();
      return {
        ...base,
        breaker: breaker.isOpen ? 'closed' : 'open',
        ports: [
          { port: 'out', direction: 'out', events: counters.out, errors: counters.error },
          { port: 'err', direction: 'out', events: counters.error, errors: 0 },
        ],
        errors: counters.error,
        bytes: { direction: 'in', count: counters.bytes },
        breakerCounts: { ...breaker.counts },
        ...(closedConnections !== undefined ? { closedConnections: { ...closedConnections } } : {}),
        ...(kernelDrops !== undefined ? { kernelDrops } : {}),
      };
    }
    case 'offramp': {
      const { counters } = live.offramp;
      return {
        ...base,
        breaker: live.offramp.triggered ? 'open' : 'closed',
        ports: [{ port: 'in', direction: 'in', events: counters.in, errors: counters.error }],
        errors: counters.error,
        bytes: { direction: 'out', count: counters.bytes },
        breakerCounts: { ...live.offramp.breakerCounts },
        inFlight: live.offramp.inFlightSends,
      };
    }
    case 'pipeline':
      return {
        ...base,
        breaker: null,
        ports: live.pipeline.portCounts().map((p) => ({ ...p, errors: 0 })),
        nodes: live.pipeline.nodeStats(),
        dropped: live.pipeline.unwiredDrops(),
      };
    case 'binding':
      return { ...base, breaker: null, ports: [] };
  }
}

const STATE_ORDER: ObservedInstance['state'][] = ['running', 'paused', 'down', 'failed'];

/**
 * One instance run by several workers, as one: counts summed per port,
 * the breaker open when it is open in any worker, the worst state (and its
 * reason) of any worker.
 */
export function combineObserved(perWorker: ObservedInstance[][]): ObservedInstance[] {
  const byUrl = new Map<string, ObservedInstance>();
  for (const observed of perWorker) {
    for (const o of observed) {
      const seen = byUrl.get(o.url);
      if (!seen) {
        byUrl.set(o.url, structuredClone(o));
        continue;
      }
      if (STATE_ORDER.indexOf(o.state) > STATE_ORDER.indexOf(seen.state)) {
        seen.state = o.state;
        seen.reason = o.reason;
      }
      if (o.breaker === 'open') seen.breaker = 'open';
      for (const port of o.ports) {
        const same = seen.ports.find((p) => p.port === port.port && p.direction === port.direction);
        if (same) {
          same.events += port.events;
          same.errors += port.errors;
        } else seen.ports.push({ ...port });
      }
      if (o.errors !== undefined) seen.errors = (seen.errors ?? 0) + o.errors;
      if (o.bytes && seen.bytes) seen.bytes.count += o.bytes.count;
      if (o.breakerCounts && seen.breakerCounts) {
        seen.breakerCounts.trigger += o.breakerCounts.trigger;
        seen.breakerCounts.restore += o.breakerCounts.restore;
      }
      if (o.inFlight !== undefined) seen.inFlight = (seen.inFlight ?? 0) + o.inFlight;
      if (o.closedConnections !== undefined) {
        const sum = (seen.closedConnections ??= {});
        for (const [reason, n] of Object.entries(o.closedConnections)) sum[reason] = (sum[reason] ?? 0) + n;
      }
      if (o.nodes !== undefined) seen.nodes = combineNodes(seen.nodes ?? [], o.nodes);
      if (o.dropped !== undefined) seen.dropped = addCounts(seen.dropped ?? {}, o.dropped);
      // the workers share one socket (docs/workers.md): each reports the count of that socket, which is not summed
      if (o.kernelDrops !== undefined) seen.kernelDrops = Math.max(seen.kernelDrops ?? 0, o.kernelDrops);
    }
  }
  return [...byUrl.values()];
}

/** The node counts of one pipeline in two workers, summed per node. */
function combineNodes(into: NodeStats[], more: NodeStats[]): NodeStats[] {
  for (const n of more) {
    const same = into.find((m) => m.node === n.node);
    if (!same) into.push(structuredClone(n));
    else {
      same.in += n.in;
      addCounts(same.out, n.out);
      addCounts(same.dropped, n.dropped);
      // each worker holds partitions of its own
      if (n.partitions) same.partitions = [...new Set([...(same.partitions ?? []), ...n.partitions])];
      if (n.watermarks) same.watermarks = { ...same.watermarks, ...n.watermarks };
    }
  }
  return into;
}

function addCounts(into: Record<string, number>, more: Record<string, number>): Record<string, number> {
  for (const [key, n] of Object.entries(more)) into[key] = (into[key] ?? 0) + n;
  return into;
}
