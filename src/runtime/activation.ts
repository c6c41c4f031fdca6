import { conflict, invalid, notFound } from '../core/errors';
import { OnrampInstance, commitOfframp, createOfframp, createPipeline } from './instances';
import type { MetricsSource } from './observe/metrics';
import type { Artefact, BindingArtefact, OfframpArtefact, OnrampArtefact, StoredPipeline } from './artefacts';
import type { BindingInstance, InstanceRecord, Live } from './live';
import { stopInstances } from './shutdown';
import { attachCheckpoints, attachDownstream, checkCheckpoints, checkDownstream } from './downstream';
import { type ResolvedLink, checkLinks, resolveLinks } from './wiring';
import { type InstancePort, type Kind, instanceUrl } from './urls';
import { idProblem } from '../schema/ids';
import { swapBlocker, swapPipelines, type SwapParts } from './swap';

/** The system pipeline that takes the metrics events; it reports none of its own. */
export const METRICS_PIPELINE = '/pipeline/system::metrics/system';

/** One binding instance to activate: `POST /binding/{binding}/{instance}` with `params`. */
export interface BindingRequest {
  readonly binding: string;
  readonly instance: string;
  readonly params: Record<string, string>;
}

/** A binding request that passed every check: its links resolved, its live record not yet filled. */
interface PlannedBinding {
  readonly request: BindingRequest;
  readonly url: string;
  readonly links: ResolvedLink[];
  readonly binding: BindingInstance;
}

/** What activation works with: the runtime's parts it reads and fills (a swap's, and one more). */
export interface ActivationParts extends SwapParts {
  /** true once the runtime shuts down: nothing is activated any more */
  shuttingDown(): boolean;
}

/**
 * Starts and stops instances in dependency order. An instance a binding
 * uses is shared: it runs while any binding (or a direct activation) keeps
 * it, and stops when the last one lets go. Callers serialise the changes
 * (`Persistence.exclusive`): these methods await sockets and files half-way.
 */
export class Activation {
  /**
   * `kind/id` of the artefacts the activation under way uses: unpublish is
   * synchronous and not queued, and must not remove one while its instance
   * is being opened (it would then run for an artefact that is gone).
   */
  private readonly activating = new Set<string>();

  constructor(private readonly parts: ActivationParts) {}

  /** Whether the activation under way uses the artefact. */
  isActivating(kind: Kind, id: string): boolean {
    return this.activating.has(`${kind}/${id}`);
  }

  /** Starts the system instances: the metrics pipeline, and the stdout and stderr offramps. */
  async startSystem(): Promise<void> {
    await this.ensure({ kind: 'pipeline', artefact: 'system::metrics', instance: 'system', port: 'in' }, 'system');
    const metrics = this.parts.instances.pipeline(METRICS_PIPELINE);
    if (!metrics) throw new Error(`${METRICS_PIPELINE} is not running after its activation`);
    metrics.start();
    await this.commit(await this.ensure({ kind: 'offramp', artefact: 'system::stdout', instance: 'system', port: 'in' }, 'system'));
    await this.commit(await this.ensure({ kind: 'offramp', artefact: 'system::stderr', instance: 'system', port: 'in' }, 'system'));
  }

  /** Activates one instance (see `Runtime.activate`); `activating` names what it uses until it ends, either way. */
  async activate(kind: Kind, artefactId: string, instanceId: string, params: Record<string, string>): Promise<Artefact> {
    if (kind === 'binding') return (await this.activateBindings([{ binding: artefactId, instance: instanceId, params }]))[0];
    try {
      if (this.parts.shuttingDown()) throw conflict('the runtime is shutting down');
      const artefact = this.parts.repository.get(kind, artefactId);
      checkInstanceId(instanceId);
      const url = instanceUrl(kind, artefactId, instanceId);
      if (this.parts.instances.has(url)) throw conflict(`instance ${url} is already running`);
      this.activating.add(`${kind}/${artefactId}`);
      await this.activateDirect({ kind, artefact: artefactId, instance: instanceId, port: 'in' }, url);
      return artefact;
    } finally {
      this.activating.clear();
    }
  }

  /**
   * Activates several binding instances all or nothing (a config file's
   * mappings; one for `POST /binding/{id}/{instance}`). Every check runs
   * before anything opens (`plan`: the ids, the links, the ports of each
   * end); then every part of every binding opens, pipelines first, then
   * offramps, then onramps; then the offramps commit (a file offramp
   * truncates its file only now, once nothing can fail for want of a part);
   * then the links connect, sinks first and onramps last, so nothing flows
   * before its sinks are in place. A failure anywhere closes what opened
   * and leaves nothing running.
   */
  async activateBindings(requests: readonly BindingRequest[]): Promise<Artefact[]> {
    try {
      const planned = requests.map((r) => this.plan(r, requests));
      for (const p of planned) for (const { src, dsts } of p.links) for (const end of [src, ...dsts]) this.activating.add(`${end.at.kind}/${end.at.artefact}`);
      try {
        await this.openAll(planned);
      } catch (err) {
        // awaited, so the answer comes once everything it opened is closed again (a kv lock, a file handle)
        for (const p of [...planned].reverse()) await this.teardownBinding(p.url, p.binding);
        throw err;
      }
      for (const p of planned) {
        this.parts.instances.add({
          url: p.url,
          kind: 'binding',
          artefactId: p.request.binding,
          instanceId: p.request.instance,
          live: { kind: 'binding', binding: p.binding },
          users: new Set(['direct']),
          data: p.binding.resolved,
        });
      }
      return planned.map((p) => p.binding.resolved);
    } finally {
      this.activating.clear();
    }
  }

  /**
   * Every check `activateBindings` makes before it opens anything, and
   * nothing opened (a dry run, `eddy validate`), with the artefacts
   * `artefact` looks up: the instances it would open, each once, in the
   * order it would open them (pipelines, offramps, onramps).
   */
  planBindings(requests: readonly BindingRequest[], artefact?: (kind: Kind, id: string) => Artefact): InstancePort[] {
    const ends = requests.map((r) => this.plan(r, requests, artefact)).flatMap((p) => p.links.flatMap(({ src, dsts }) => [src.at, ...dsts.map((d) => d.at)]));
    const unique = new Map(ends.map((at) => [instanceUrl(at.kind, at.artefact, at.instance), at]));
    return (['pipeline', 'offramp', 'onramp'] as const).flatMap((kind) => [...unique.values()].filter((at) => at.kind === kind));
  }

  /**
   * What `activateBindings` would refuse before opening anything, without
   * opening anything: for a config reload, with the artefacts it is about
   * to publish in `artefact`.
   */
  check(
    request: BindingRequest,
    artefact: (kind: Kind, id: string) => Artefact = (k, id) => this.parts.repository.get(k, id),
  ): { links: ResolvedLink[]; resolved: BindingArtefact } {
    const binding = artefact('binding', request.binding) as BindingArtefact;
    checkInstanceId(request.instance);
    const links = resolveLinks(binding, { ...request.params, instance: request.instance });
    checkLinks(links, artefact);
    checkDownstream(binding.id, links, artefact, this.parts.env.registries);
    checkCheckpoints(binding.id, links, artefact, this.parts.env.registries);
    // the binding as its instance shows it (GET /binding/{id}/{instance}): the links with every placeholder filled in
    const resolved: BindingArtefact = { ...binding, links: {} };
    for (const { src, dsts } of links) resolved.links[src.raw] = dsts.map((d) => d.raw);
    return { links, resolved };
  }

  /** Why the running pipeline instance cannot be swapped in place for `artefact`, if it cannot (swap.ts). */
  swapBlocker(url: string, artefact: StoredPipeline): string | undefined {
    return swapBlocker(this.parts, url, artefact);
  }

  /** Swaps each running pipeline instance in `urls` for one of `artefact`, its onramps paused meanwhile, not stopped (swap.ts). */
  swapPipelines(urls: readonly string[], artefact: StoredPipeline): Promise<void> {
    return swapPipelines(this.parts, urls, artefact);
  }

  /** Deactivates an instance and every instance only it kept alive. */
  async deactivate(kind: Kind, artefactId: string, instanceId: string): Promise<Artefact> {
    this.parts.repository.get(kind, artefactId);
    const url = instanceUrl(kind, artefactId, instanceId);
    const record = this.parts.instances.get(url);
    if (!record) throw notFound(`instance ${url} not found`);
    if (record.users.has('system')) throw conflict(`instance ${url} is a system instance and cannot be deactivated`);
    const others = [...record.users].filter((u) => u !== 'direct');
    if (others.length > 0) throw conflict(`instance ${url} is in use by ${others.join(', ')}`);
    if (record.live.kind === 'binding') {
      this.parts.instances.delete(url);
      await this.teardownBinding(url, record.live.binding);
    } else {
      record.users.delete('direct');
      await this.release(url);
    }
    return record.data;
  }

  /** An onramp, offramp or pipeline activated by itself: opened, committed, started; closed again if committing fails. */
  private async activateDirect(at: InstancePort, url: string): Promise<void> {
    await this.ensure(at, 'direct');
    try {
      await this.commit(url);
    } catch (err) {
      this.parts.instances.get(url)?.users.delete('direct');
      await this.release(url);
      throw err;
    }
    this.parts.instances.pipeline(url)?.start();
  }

  /** Every check of one binding activation that needs nothing opened; throws the first refusal. */
  private plan(
    request: BindingRequest,
    all: readonly BindingRequest[],
    artefact: (kind: Kind, id: string) => Artefact = (k, id) => this.parts.repository.get(k, id),
  ): PlannedBinding {
    if (this.parts.shuttingDown()) throw conflict('the runtime is shutting down');
    artefact('binding', request.binding);
    checkInstanceId(request.instance);
    const url = instanceUrl('binding', request.binding, request.instance);
    if (this.parts.instances.has(url)) throw conflict(`instance ${url} is already running`);
    if (all.filter((r) => r.binding === request.binding && r.instance === request.instance).length > 1) throw conflict(`instance ${url} is asked for twice`);
    const { links, resolved } = this.check(request, artefact);
    const binding: BindingInstance = { resolved, params: request.params, sourceDisconnects: [], disconnects: [], uses: new Set() };
    return { request, url, links, binding };
  }

  /** Opens every part of the planned bindings, commits the offramps, then connects, as `activateBindings` says. */
  private async openAll(planned: readonly PlannedBinding[]): Promise<void> {
    for (const kind of ['pipeline', 'offramp', 'onramp'] as const) {
      for (const { url, links, binding } of planned) {
        const ends = links.flatMap(({ src, dsts }) => [src.at, ...dsts.map((d) => d.at)]);
        for (const end of ends.filter((e) => e.kind === kind)) binding.uses.add(await this.ensure(end, url));
      }
    }
    // a transactional source takes what its events reach (its changelogs made, its sinks joined) before anything commits
    for (const { links } of planned) await attachDownstream(links, this.parts.instances);
    // a checkpointing WAL restores what follows it, and tells its sinks where they go on from, before they open
    for (const { links } of planned) await attachCheckpoints(links, this.parts.instances);
    // every part opened: only now do the sinks take effect (a file offramp truncates its file here)
    for (const { binding } of planned) for (const used of binding.uses) await this.commit(used);
    // sinks first; then the pipelines start (a WAL may replay at once); then the sources
    const fromOnramp = (l: ResolvedLink) => l.src.at.kind === 'onramp';
    const { wiring, instances } = this.parts;
    for (const { links, binding } of planned)
      for (const { src, dsts } of links.filter((l) => !fromOnramp(l))) for (const dst of dsts) binding.disconnects.push(wiring.connect(src.at, dst.at));
    for (const { binding } of planned) for (const used of binding.uses) instances.pipeline(used)?.start();
    for (const { links, binding } of planned)
      for (const { src, dsts } of links.filter(fromOnramp)) for (const dst of dsts) binding.sourceDisconnects.push(wiring.connect(src.at, dst.at));
  }

  /** Creates the instance unless it runs already, and records `user` as keeping it alive. */
  private async ensure(at: InstancePort, user: string): Promise<string> {
    const url = instanceUrl(at.kind, at.artefact, at.instance);
    const existing = this.parts.instances.get(url);
    if (existing) {
      existing.users.add(user);
      return url;
    }
    const artefact = this.parts.repository.get(at.kind, at.artefact);
    const { live, source } = await this.create(url, at.kind, artefact);
    // the url may have been taken while a ramp was opening
    if (this.parts.instances.has(url)) {
      if (live.kind === 'offramp') await live.offramp.close();
      if (live.kind === 'onramp') await live.onramp.close();
      return this.ensure(at, user);
    }
    this.parts.instances.add({ url, kind: at.kind, artefactId: at.artefact, instanceId: at.instance, live, users: new Set([user]), data: artefact });
    const interval = (artefact as { metrics_interval_s?: number }).metrics_interval_s;
    if (interval && url !== METRICS_PIPELINE) this.parts.metrics.start(url, source, interval);
    return url;
  }

  /** Builds the live object of a pipeline, offramp or onramp, and what its metrics are read from. */
  private async create(url: string, kind: InstancePort['kind'], artefact: Artefact): Promise<{ live: Live; source: MetricsSource }> {
    const { env } = this.parts;
    if (kind === 'pipeline') {
      const pipeline = createPipeline(url, artefact as StoredPipeline, env);
      return { live: { kind, pipeline }, source: { kind, pipeline } };
    }
    if (kind === 'offramp') {
      const offramp = await createOfframp(url, artefact as OfframpArtefact, env);
      return { live: { kind, offramp }, source: { kind: 'ramp', counters: offramp.counters } };
    }
    const onramp = await OnrampInstance.create(url, artefact as OnrampArtefact, env);
    return { live: { kind, onramp }, source: { kind: 'ramp', counters: onramp.runtime.counters } };
  }

  /** An offramp's second phase of opening (see `Sink.commit`); once per instance, nothing for other kinds. */
  private async commit(url: string): Promise<void> {
    const record = this.parts.instances.get(url);
    if (record?.live.kind === 'offramp') await commitOfframp(record.data as OfframpArtefact, record.live.offramp);
  }

  /** Drops an instance nothing uses any more (closing it, unless `stopped` says that was done). */
  private async release(url: string, stopped = false): Promise<void> {
    const record = this.parts.instances.get(url);
    if (!record || record.users.size > 0) return;
    this.parts.instances.delete(url);
    this.parts.metrics.stop(url);
    if (!stopped) {
      if (record.live.kind === 'pipeline') await record.live.pipeline.stop();
      if (record.live.kind === 'offramp') await record.live.offramp.close();
      if (record.live.kind === 'onramp') await record.live.onramp.close();
    }
    this.parts.taps.instanceStopped(url);
  }

  /**
   * Undoes a binding. What only it kept alive stops as a shutdown stops
   * everything (`stopInstances`): its sources pause, its pipelines drain
   * (a batch, open windows flush), its sinks finish their sends and close,
   * the acks reach the sources before they close; so a deactivation, and a
   * reload of the flow, loses nothing in flight. What other bindings still
   * use runs on; only this binding's links to it are undone.
   */
  private async teardownBinding(url: string, binding: BindingInstance): Promise<void> {
    const owned = [...binding.uses].flatMap((u) => {
      const record = this.parts.instances.get(u);
      return record?.users.size === 1 && record.users.has(url) ? [record] : [];
    });
    const self: InstanceRecord = {
      url,
      kind: 'binding',
      artefactId: '',
      instanceId: '',
      live: { kind: 'binding', binding },
      users: new Set(),
      data: binding.resolved,
    };
    // undoes the binding's links too (stopInstances empties its disconnect lists), after the drain
    await stopInstances([...owned, self]);
    const stopped = new Set(owned.map((r) => r.url));
    for (const u of binding.uses) {
      this.parts.instances.get(u)?.users.delete(url);
      await this.release(u, stopped.has(u));
    }
  }
}

function checkInstanceId(id: string): void {
  const problem = idProblem(id);
  if (problem !== undefined) throw invalid(`instance id ${problem}`);
}
