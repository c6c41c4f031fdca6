/**
 * Which workers run an activation under `eddy server run --workers N`
 * (docs/workers.md). A whole onramp → pipeline → offramp chain always lives
 * in one process: an activation runs either on every worker or on worker 0
 * alone. Every worker only when each part can run N times side by side: its
 * onramps shard by nature, its offramps can be written by several processes
 * at once, its pipelines keep no state on disk.
 */
import type { Placement } from '../connectors/connector';
import type { Registries } from '../runtime/registries';
import type { Repository } from '../runtime/repository';
import type { Artefact, BindingArtefact, PipelineArtefact, RampArtefact } from '../runtime/artefacts';
import { type Kind, type InstancePort, parseLinkUrl } from '../runtime/urls';

export type { Placement };

/** Where one artefact's instances run, with the reason when it is one worker. */
export interface PlacementDecision {
  placement: Placement;
  /** why it runs on one worker (for the log and the docs); absent on every worker */
  reason?: string;
}

const EVERY: PlacementDecision = { placement: 'every-worker' };

/**
 * The placement of an activation. `artefact` is what the activation
 * answered: for a binding, its links with the parameters filled in.
 */
export function placementOf(kind: Kind, artefact: Artefact, repository: Repository, registries: Registries): PlacementDecision {
  if (kind !== 'binding') return partPlacement({ kind, artefact: artefact.id }, repository, registries);
  const ends: Omit<InstancePort, 'instance' | 'port'>[] = [];
  for (const [src, dsts] of Object.entries((artefact as BindingArtefact).links)) {
    ends.push(parseLinkUrl(src, 'source', 'placement'));
    for (const dst of dsts) ends.push(parseLinkUrl(dst, 'destination', 'placement'));
  }
  for (const end of ends) {
    const decision = partPlacement(end, repository, registries);
    if (decision.placement === 'one-worker') return decision;
  }
  return EVERY;
}

function partPlacement(end: { kind: Kind; artefact: string }, repository: Repository, registries: Registries): PlacementDecision {
  const artefact = repository.get(end.kind, end.artefact);
  if (end.kind === 'pipeline') {
    // a WAL with a directory: N processes would open one log (docs/workers.md: pinned, not per-worker paths)
    const wal = (artefact as PipelineArtefact).nodes.find((n) => n.type === 'qos::wal' && (n.config as { dir?: unknown } | undefined)?.dir !== undefined);
    return wal ? { placement: 'one-worker', reason: `pipeline '${artefact.id}' keeps a write-ahead log in one directory (node '${wal.id}')` } : EVERY;
  }
  if (end.kind === 'onramp' || end.kind === 'offramp') {
    const ramp = artefact as RampArtefact;
    const type = end.kind === 'onramp' ? registries.onramps.get(ramp.type) : registries.offramps.get(ramp.type);
    const declared = type.placement;
    const placement: Placement = typeof declared === 'function' ? declared(repository.rampConfig(end.kind, ramp)) : (declared ?? 'one-worker');
    return placement === 'every-worker' ? EVERY : { placement, reason: `${end.kind} '${ramp.id}' (${ramp.type}) runs on one worker` };
  }
  return EVERY;
}
