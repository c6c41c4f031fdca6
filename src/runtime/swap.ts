/**
 * A running pipeline instance replaced by another version of its artefact
 * while its onramps run on (`Runtime.replacePipeline`): the least
 * disruption for the common edit of a running flow, a changed pipeline
 * between unchanged onramps and offramps (`POST /config?replace=true`, a
 * config reload; docs/rest-api.md, "Replacing a running flow").
 *
 * The onramps feeding the instance are paused by their circuit breaker, as
 * a sink that is down pauses them: what arrives meanwhile is held in the
 * onramp (or its type stops reading), nothing is dropped. The old instance
 * is drained as a deactivation drains it: its inputs complete, so what an
 * operator holds (a partial batch, the open windows of a window::aggregate,
 * emitted as its `on_shutdown` says) goes to the offramps, and the sends in
 * flight settle, their acks reaching the sources through it. The new
 * instance then takes the old one's URL and links: wired to the same
 * offramp instances, started, then wired to the same onramp instances, each
 * new link made before the old one is undone, so an onramp's stream never
 * loses its last subscriber and its source does not restart. The old
 * instance stops, and the onramps read again. Every event passes through
 * exactly one of the two versions: none is lost, none repeated.
 */
import { conflict } from '../core/errors';
import type { OfframpRuntime } from '../ramps/offramp';
import type { PipelineRuntime } from '../pipeline/pipeline';
import type { Artefact, StoredPipeline } from './artefacts';
import { attachedFlow } from './downstream';
import { createPipeline, type InstanceEnv, type OnrampInstance } from './instances';
import type { InstanceRecord, LiveInstances } from './live';
import type { Repository } from './repository';
import type { MetricsReporter } from './observe/metrics';
import type { TapHub } from './observe/tap';
import { type InstancePort, type Kind, instanceUrl } from './urls';
import { checkLinks, resolveLinks, type LinkWiring, type ResolvedLink } from './wiring';

/** Who holds the onramps' breakers while a pipeline instance is swapped (followed by its URL). */
export const SWAP = 'pipeline swap';

/** The runtime's parts a swap reads and changes (activation's, which hands them in). */
export interface SwapParts {
  readonly repository: Repository;
  readonly instances: LiveInstances;
  readonly wiring: LinkWiring;
  readonly metrics: MetricsReporter;
  readonly taps: TapHub;
  readonly env: InstanceEnv;
}

/** One link of a binding, end to end. */
type Link = readonly [src: InstancePort, dst: InstancePort];

/** Where a pipeline instance sits: the one binding that keeps it, its links in and out. */
interface Site {
  readonly url: string;
  readonly record: InstanceRecord;
  readonly links: ResolvedLink[];
  readonly into: Link[];
  readonly out: Link[];
}

const urlOf = (at: InstancePort) => instanceUrl(at.kind, at.artefact, at.instance);

/** The instance's site, or why it cannot be swapped in place. */
function siteOf(parts: SwapParts, url: string): Site | string {
  const record = parts.instances.get(url);
  if (record?.live.kind !== 'pipeline') return `${url} does not run`;
  const users = [...record.users];
  const keeper = users.length === 1 ? parts.instances.get(users[0]) : undefined;
  if (keeper?.live.kind !== 'binding') return `${url} is kept by ${users.join(' and ')}, not by one binding`;
  const links = resolveLinks(keeper.live.binding.resolved, {});
  const into: Link[] = [];
  const out: Link[] = [];
  for (const { src, dsts } of links) {
    for (const dst of dsts) {
      if (urlOf(dst.at) === url) into.push([src.at, dst.at]);
      if (urlOf(src.at) === url) out.push([src.at, dst.at]);
    }
  }
  const from = into.find(([src]) => src.kind !== 'onramp');
  if (from) return `${url} is fed by ${urlOf(from[0])}, not by an onramp`;
  const to = out.find(([, dst]) => dst.kind !== 'offramp');
  if (to) return `${url} feeds ${urlOf(to[1])}, not an offramp`;
  return { url, record, links, into, out };
}

/** Artefacts as the repository holds them, but `artefact` for its own pipeline. */
function withPipeline(parts: SwapParts, artefact: StoredPipeline): (kind: Kind, id: string) => Artefact {
  return (kind, id) => (kind === 'pipeline' && id === artefact.id ? artefact : parts.repository.get(kind, id));
}

/**
 * Why the running pipeline instance `url` cannot be swapped in place for
 * `artefact`, or undefined when it can: it must be kept by one binding
 * only, fed by onramps only and feed offramps only, in a flow no
 * transactional source or checkpointing WAL was attached to (before or
 * after). Anything else is restarted (deactivated and activated again).
 */
export function swapBlocker(parts: SwapParts, url: string, artefact: StoredPipeline): string | undefined {
  const site = siteOf(parts, url);
  return typeof site === 'string' ? site : flowBlocker(parts, site, artefact);
}

/** A transactional source or checkpointing WAL attached to the site's flow (before or after), which keeps it from a swap. */
function flowBlocker(parts: SwapParts, site: Site, artefact: StoredPipeline): string | undefined {
  const registries = parts.env.registries;
  const attached =
    attachedFlow(site.links, (k, id) => parts.repository.get(k, id), registries) ?? attachedFlow(site.links, withPipeline(parts, artefact), registries);
  return attached && `its flow is bound to the instances it was activated with: ${attached}`;
}

/**
 * Swaps each running instance in `urls` for one of `artefact`. Every check
 * (`swapBlocker`, the ports its links name) and every new instance is made
 * before anything pauses: a refusal leaves the old instances running as
 * they were.
 */
export async function swapPipelines(parts: SwapParts, urls: readonly string[], artefact: StoredPipeline): Promise<void> {
  const sites = urls.map((url) => {
    const site = siteOf(parts, url);
    // the site is walked once: the flow check reads the links it found
    const blocker = typeof site === 'string' ? site : flowBlocker(parts, site, artefact);
    if (typeof site === 'string' || blocker !== undefined) throw conflict(`pipeline '${artefact.id}' cannot be replaced while it runs: ${blocker}`);
    checkLinks(site.links, withPipeline(parts, artefact));
    return site;
  });
  const made: PipelineRuntime[] = [];
  try {
    for (const site of sites) made.push(createPipeline(site.url, artefact, parts.env));
  } catch (err) {
    await Promise.all(made.map((p) => p.stop()));
    throw err;
  }
  for (const [i, site] of sites.entries()) await swapOne(parts, site, made[i], artefact);
}

/** The swap itself, as the module comment says. */
async function swapOne(parts: SwapParts, site: Site, next: PipelineRuntime, artefact: StoredPipeline): Promise<void> {
  const { instances, wiring, metrics, taps } = parts;
  const old = (site.record.live as { pipeline: PipelineRuntime }).pipeline;
  const onramps = unique(site.into.map(([src]) => instances.onramp(urlOf(src))));
  const offramps = unique(site.out.map(([, dst]) => instances.offramp(urlOf(dst))));
  const hold = `${SWAP} ${site.url}`;
  for (const onramp of onramps) onramp.runtime.contraflow({ kind: 'trigger', from: hold });
  try {
    // what the old version holds is flushed downstream; one turn of the event loop for synchronous sinks,
    // then the sends in flight settle, their acks reaching the sources through the old instance
    old.drain();
    await new Promise((r) => setImmediate(r));
    await Promise.all(offramps.map((o) => o.sendsSettled()));
    instances.add({ ...site.record, live: { kind: 'pipeline', pipeline: next }, data: artefact });
    for (const [src, dst] of site.out) wiring.rewire(src, dst);
    next.start();
    for (const [src, dst] of site.into) wiring.rewire(src, dst);
    metrics.stop(site.url);
    if (artefact.metrics_interval_s) metrics.start(site.url, { kind: 'pipeline', pipeline: next }, artefact.metrics_interval_s);
    taps.instanceStopped(site.url, 'pipeline replaced');
    await old.stop();
  } finally {
    for (const onramp of onramps) onramp.runtime.contraflow({ kind: 'restore', from: hold });
  }
}

function unique<T extends OnrampInstance | OfframpRuntime>(items: (T | undefined)[]): T[] {
  return [...new Set(items.filter((i): i is T => i !== undefined))];
}
