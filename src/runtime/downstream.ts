/**
 * What a transactional source's events reach (kafka `guarantee:
 * exactly_once`, docs/design-exactly-once.md): every pipeline and offramp
 * downstream of it through a binding's links, followed from each of its
 * ports, through every output of a pipeline (an event on `err` or `late` is
 * an output too) and every output of a linked offramp.
 *
 * `checkDownstream` refuses, before anything opens, a flow whose outputs
 * cannot join the source's transactions (an offramp type that cannot, or
 * an offramp another source feeds too); `attachDownstream` hands the
 * source the live parts once they are opened, before any event flows.
 */
import { invalid } from '../core/errors';
import type { Downstream, OfframpType, OnrampType, Sink } from '../connectors/connector';
import type { OperatorType } from '../pipeline/operator';
import type { CheckpointParts } from '../core/checkpoint';
import type { Artefact, OfframpArtefact, OnrampArtefact, PipelineArtefact } from './artefacts';
import type { LiveInstances } from './live';
import type { Registries } from './registries';
import { type InstancePort, instanceUrl } from './urls';
import type { ResolvedLink } from './wiring';

type End = Pick<InstancePort, 'kind' | 'artefact' | 'instance'>;

const key = (at: End) => instanceUrl(at.kind, at.artefact, at.instance);

/** The instances reachable from `from` through `links` (not `from` itself), in the order found. */
function reachable(from: End, links: readonly ResolvedLink[]): End[] {
  const seen = new Map<string, End>();
  const queue: End[] = [from];
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    for (const { src, dsts } of links) {
      if (key(src.at) !== key(at)) continue;
      for (const { at: dst } of dsts) {
        // a link back to an onramp is a linked reply, not a way further downstream
        if (dst.kind === 'onramp' || seen.has(key(dst)) || key(dst) === key(from)) continue;
        seen.set(key(dst), dst);
        queue.push(dst);
      }
    }
  }
  return [...seen.values()];
}

/** Every end of the links, sources and destinations, each once. */
function endsOf(links: readonly ResolvedLink[], kind: InstancePort['kind']): End[] {
  const found = new Map<string, End>();
  for (const { src, dsts } of links) for (const at of [src.at, ...dsts.map((d) => d.at)]) if (at.kind === kind) found.set(key(at), at);
  return [...found.values()];
}

/** The live stateful nodes of the pipelines and the sinks of the offramps among `ends`: what a source or a WAL attaches. */
function liveParts(ends: readonly End[], instances: LiveInstances) {
  const stateful: Downstream['stateful'][number][] = [];
  const sinks: { url: string; type: string; sink: Sink }[] = [];
  for (const at of ends) {
    const url = key(at);
    const pipeline = instances.pipeline(url);
    if (pipeline) for (const { node, state } of pipeline.statefulNodes()) stateful.push({ pipeline: at.artefact, node, state });
    const offramp = instances.offramp(url);
    const record = instances.get(url);
    if (offramp && record) sinks.push({ url, type: (record.data as OfframpArtefact).type, sink: offramp.sinkOf() });
  }
  return { stateful, sinks };
}

/** The onramps of the links whose type commits what their events became downstream. */
function transactionalSources(links: readonly ResolvedLink[], artefact: (kind: InstancePort['kind'], id: string) => Artefact, registries: Registries): End[] {
  const found = new Map<string, End>();
  for (const { src } of links) {
    if (src.at.kind !== 'onramp' || found.has(key(src.at))) continue;
    const onramp = artefact('onramp', src.at.artefact) as OnrampArtefact;
    const type = registries.onramps.get(onramp.type) as OnrampType<unknown>;
    if (type.commitsDownstream?.(onramp.config ?? {})) found.set(key(src.at), src.at);
  }
  return [...found.values()];
}

/**
 * Refuses a binding where a transactional source's events reach an offramp
 * that cannot join its transactions, or one another source of the binding
 * feeds too (its writes would be committed with the wrong source's offsets).
 */
export function checkDownstream(
  binding: string,
  links: readonly ResolvedLink[],
  artefact: (kind: InstancePort['kind'], id: string) => Artefact,
  registries: Registries,
): void {
  for (const source of transactionalSources(links, artefact, registries)) {
    for (const at of reachable(source, links)) {
      if (at.kind !== 'offramp') continue;
      const offramp = artefact('offramp', at.artefact) as OfframpArtefact;
      const type = registries.offramps.get(offramp.type) as OfframpType<unknown>;
      if (!type.joinsTransactions) {
        throw invalid(
          `binding ${binding}: ${key(source)} commits exactly once (guarantee: exactly_once), and its events reach ${key(at)}, a ${offramp.type} offramp, which cannot take part in its transactions: only kafka offramps on the same cluster can (docs/design-exactly-once.md)`,
        );
      }
      const other = links.find(
        ({ src }) => src.at.kind === 'onramp' && key(src.at) !== key(source) && reachable(src.at, links).some((r) => key(r) === key(at)),
      );
      if (other) {
        throw invalid(
          `binding ${binding}: ${key(at)} is fed by ${key(source)}, which commits exactly once, and by ${key(other.src.at)}: an offramp in a transaction takes one source's events only`,
        );
      }
    }
  }
}

/**
 * Why the flow of these links is bound to the instances it was activated
 * with, if it is: a transactional source or a checkpointing WAL was handed
 * its live stateful nodes and sinks (`attachDownstream`,
 * `attachCheckpoints`), so a pipeline of it cannot be swapped in place.
 */
export function attachedFlow(
  links: readonly ResolvedLink[],
  artefact: (kind: InstancePort['kind'], id: string) => Artefact,
  registries: Registries,
): string | undefined {
  const source = transactionalSources(links, artefact, registries).at(0);
  if (source) return `${key(source)} commits exactly once (guarantee: exactly_once)`;
  const wal = checkpointingPipelines(links, artefact, registries).at(0);
  if (wal) return `${key(wal[0])} node ${wal[1]} checkpoints what follows it (qos::wal, guarantee: exactly_once)`;
  return undefined;
}

/** The pipelines of the links with a node that checkpoints what follows it (qos::wal, `guarantee: exactly_once`), with that node's id. */
function checkpointingPipelines(
  links: readonly ResolvedLink[],
  artefact: (kind: InstancePort['kind'], id: string) => Artefact,
  registries: Registries,
): [End, string][] {
  return endsOf(links, 'pipeline').flatMap((at): [End, string][] => {
    const pipeline = artefact('pipeline', at.artefact) as PipelineArtefact;
    const node = pipeline.nodes.find((n) => (registries.operators.get(n.type) as OperatorType<unknown> | undefined)?.checkpoints?.(n.config ?? {}));
    return node ? [[at, node.id]] : [];
  });
}

/**
 * Refuses a binding where a checkpointing WAL's events reach an offramp
 * that cannot take part in its checkpoints (it could not be cut back to
 * one after a crash), or one that a source outside the WAL's flow feeds too
 * (what that source wrote would be cut off with the rest).
 */
export function checkCheckpoints(
  binding: string,
  links: readonly ResolvedLink[],
  artefact: (kind: InstancePort['kind'], id: string) => Artefact,
  registries: Registries,
): void {
  for (const [pipeline, node] of checkpointingPipelines(links, artefact, registries)) {
    const where = `${key(pipeline)} node ${node} (qos::wal, guarantee: exactly_once)`;
    const reached = reachable(pipeline, links);
    for (const at of reached) {
      if (at.kind !== 'offramp') continue;
      const offramp = artefact('offramp', at.artefact) as OfframpArtefact;
      const type = registries.offramps.get(offramp.type) as OfframpType<unknown>;
      if (!type.joinsCheckpoints) {
        throw invalid(
          `binding ${binding}: ${where} checkpoints what follows it, and its events reach ${key(at)}, a ${offramp.type} offramp, which cannot take part in its checkpoints: only file offramps can (docs/design-exactly-once.md)`,
        );
      }
      const other = links.find(
        ({ src }) =>
          src.at.kind === 'onramp' &&
          !reachable(src.at, links).some((r) => key(r) === key(pipeline)) &&
          reachable(src.at, links).some((r) => key(r) === key(at)),
      );
      if (other) {
        throw invalid(
          `binding ${binding}: ${key(at)} is fed by ${where} and by ${key(other.src.at)}, which does not go through it: a checkpointed offramp takes one WAL's events only`,
        );
      }
    }
  }
}

/** Hands each checkpointing WAL of the binding the stateful nodes after it and the sinks its events reach (and so restores them). */
export async function attachCheckpoints(links: readonly ResolvedLink[], instances: LiveInstances): Promise<void> {
  for (const at of endsOf(links, 'pipeline')) {
    const pipeline = instances.pipeline(key(at));
    for (const { node, attach, after } of pipeline?.checkpointingNodes() ?? []) {
      const reached = liveParts(reachable(at, links), instances);
      const parts: CheckpointParts = {
        stateful: [...after.map(({ node: id, state }) => ({ pipeline: at.artefact, node: id, state })), ...reached.stateful],
        sinks: reached.sinks.map(({ url, type, sink }) => ({ url, type, sink: sink.checkpointed })),
      };
      try {
        await attach(parts);
      } catch (err) {
        throw new Error(`${key(at)} node ${node}: ${(err as Error).message}`);
      }
    }
  }
}

/** Hands each transactional source of the binding the live stateful nodes and sinks its events reach. */
export async function attachDownstream(links: readonly ResolvedLink[], instances: LiveInstances): Promise<void> {
  // the onramps the links start from (an onramp a link ends at takes linked replies, not events to commit)
  const sources = new Map(links.filter(({ src }) => src.at.kind === 'onramp').map(({ src }) => [key(src.at), src.at]));
  for (const source of sources.values()) {
    const onramp = instances.onramp(key(source))?.runtime.source;
    if (!onramp?.attachDownstream) continue;
    await onramp.attachDownstream(liveParts(reachable(source, links), instances));
  }
}
