/**
 * The primary of `eddy server run --workers N` (docs/workers.md): the API,
 * the repository, the store and the config files stay here. Every publish
 * and activation goes through this process's own Runtime first (the same
 * checks as in one process, on shadow instances that touch nothing, see
 * shadow.ts); an accepted activation is then run by the workers its
 * placement names, and answered only once every one of them succeeded.
 */
import { present } from '../core/errors';
import type { Artefact, BindingArtefact } from '../runtime/artefacts';
import { Runtime, type BindingRequest, type Health, type RuntimeOptions } from '../runtime/runtime';
import type { RuntimeStore, StoredInstance } from '../runtime/store';
import { type Kind, instanceUrl, parseLinkUrl } from '../runtime/urls';
import type { ObservedInstance } from '../runtime/observe/observe';
import { placementOf } from './placement';
import { SerialQueue } from '../core/serial-queue';
import { shadowRegistries } from './shadow';
import type { WorkerPool } from './pool';
import type { InstanceMetrics } from './metrics';
import type { InstanceRequest } from './protocol';

/** A directly activated instance as the workers were asked to run it: kept to run it again on a restarted worker. */
interface Placed {
  request: InstanceRequest;
  artefacts: { kind: Kind; artefact: Artefact }[];
  workers: number[];
}

export class ClusterRuntime extends Runtime {
  /** each directly activated instance, in activation order (the order a restarted worker gets them again) */
  private readonly placed = new Map<string, Placed>();
  /** this runtime's own queue: a change and its workers' part run before the next change starts */
  private readonly serial = new SerialQueue();

  constructor(
    readonly pool: WorkerPool,
    options: Omit<RuntimeOptions, 'registries' | 'scheduler'> = {},
  ) {
    const holder: { self?: ClusterRuntime } = {};
    super({
      ...options,
      registries: shadowRegistries(),
      store: options.store && restoringToWorkers(options.store, (i, a) => present(holder.self, 'the cluster runtime').place(i, a)),
    });
    holder.self = this;
    pool.exitRequests.subscribe(({ code, reason }) => this.requestExit(code, reason));
    pool.restarted.subscribe((worker) => {
      // what it held is taken now: an activation queued meanwhile already runs on the new worker
      const held = [...this.placed].filter(([, p]) => p.workers.includes(worker));
      // queued even when the worker died during a change (say, its own re-placement): an event from outside, never a part of that change
      void this.serial.enqueue(() => this.replace(worker, held));
    });
  }

  override activate(kind: Kind, artefactId: string, instanceId: string, params: Record<string, string> = {}): Promise<Artefact> {
    return this.serial.run(async () => {
      const artefact = await super.activate(kind, artefactId, instanceId, params);
      const request = { kind, artefact: artefactId, instance: instanceId, params: kind === 'binding' ? params : {} };
      try {
        await this.place(request, artefact);
      } catch (err) {
        // the workers rolled back their part; the primary's follows, so nothing of it is left anywhere
        await super
          .deactivate(kind, artefactId, instanceId)
          .catch((e: unknown) => this.logger.error(`rolling back ${instanceUrl(kind, artefactId, instanceId)}: ${(e as Error).message}`));
        throw err;
      }
      return artefact;
    });
  }

  /**
   * A config file's mappings: every check of every one runs in the primary
   * first (links, ports: `Runtime.activateBindings`), then each is placed on
   * its workers in order, and a failure takes back every one of them. A
   * worker opens each binding by itself, so a failure to open in one (a
   * port taken) comes after the bindings before it committed there
   * (docs/workers.md).
   */
  override activateBindings(requests: readonly BindingRequest[]): Promise<Artefact[]> {
    return this.serial.run(async () => {
      const artefacts = await super.activateBindings(requests);
      const asked = requests.map((r) => ({ kind: 'binding' as const, artefact: r.binding, instance: r.instance, params: r.params }));
      try {
        for (const [i, request] of asked.entries()) await this.place(request, artefacts[i]);
      } catch (err) {
        for (const request of [...asked].reverse()) {
          await this.unplace(request.kind, request.artefact, request.instance);
          await super
            .deactivate(request.kind, request.artefact, request.instance)
            .catch((e: unknown) => this.logger.error(`rolling back ${instanceUrl(request.kind, request.artefact, request.instance)}: ${(e as Error).message}`));
        }
        throw err;
      }
      return artefacts;
    });
  }

  /** One change here too: the workers' part of every activation inside it is done before anything queued after it starts. */
  override exclusive<T>(change: () => Promise<T>): Promise<T> {
    return this.serial.run(() => super.exclusive(change));
  }

  override deactivate(kind: Kind, artefactId: string, instanceId: string): Promise<Artefact> {
    return this.serial.run(async () => {
      const artefact = await super.deactivate(kind, artefactId, instanceId);
      await this.unplace(kind, artefactId, instanceId);
      return artefact;
    });
  }

  /** Takes an instance off the workers it was placed on (none: nothing to do). */
  private async unplace(kind: Kind, artefactId: string, instanceId: string): Promise<void> {
    const url = instanceUrl(kind, artefactId, instanceId);
    await this.pool.deactivate(this.placed.get(url)?.workers ?? [], { kind, artefact: artefactId, instance: instanceId, params: {} });
    this.placed.delete(url);
  }

  /** The workers' health (see `WorkerPool.health`), not the primary's shadow instances. */
  override health(): Health {
    return this.pool.health();
  }

  /** Every instance's counters summed over the workers (for GET /metrics and friends). */
  workerMetrics(): Promise<InstanceMetrics[]> {
    return this.pool.metrics();
  }

  /** The workers' instances, each added up over the workers that run it (for GET /status and /metrics). */
  override observeAll(): Promise<ObservedInstance[]> {
    return this.pool.observe();
  }

  /** The events pass in the workers, which the tap does not reach (yet): refused rather than a tap that shows nothing. */
  override tapUnavailable(): string {
    return 'the live tap is not available with --workers N > 1: events pass in the worker processes, not in the one serving the API (run with --workers 1 to tap)';
  }

  /** Drains the workers first (they hold the flows), then the primary's own runtime. */
  override async shutdown(): Promise<void> {
    await this.pool.shutdown();
    await super.shutdown();
  }

  /** Runs an activation the primary accepted on the workers its placement names. */
  private async place(request: InstanceRequest, resolved: Artefact): Promise<void> {
    const url = instanceUrl(request.kind, request.artefact, request.instance);
    const decision = placementOf(request.kind, resolved, this.repository, this.registries);
    const workers = decision.placement === 'every-worker' ? this.pool.all() : [0];
    if (decision.reason) this.logger.info(`${url} runs on worker 0 only: ${decision.reason}`);
    const artefacts = this.artefactsOf(request, resolved as BindingArtefact);
    await this.pool.activate(workers, request, artefacts);
    this.placed.set(url, { request, artefacts, workers });
  }

  /**
   * A dead worker is running again: every instance placed on it is activated
   * on it again, in the order they were first activated (a binding after
   * what it links, as the first time). One that fails is logged and shown
   * failed in its health; the others go on.
   */
  private async replace(worker: number, held: [string, Placed][]): Promise<void> {
    for (const [url, placed] of held) {
      // deactivated while the worker restarted
      if (this.placed.get(url) !== placed) continue;
      try {
        await this.pool.activate([worker], placed.request, placed.artefacts);
        this.logger.info(`${url} activated again on worker ${worker}`);
      } catch (err) {
        this.logger.error(`${url}: not activated again on restarted worker ${worker}: ${(err as Error).message}`);
        this.pool.lostOnRestart(worker, url, (err as Error).message);
      }
    }
  }

  /** The primary's version of every artefact an activation uses, for the workers' repositories. */
  private artefactsOf(request: InstanceRequest, resolved: BindingArtefact): { kind: Kind; artefact: Artefact }[] {
    const parts = new Map<string, { kind: Kind; id: string }>([[`${request.kind}/${request.artefact}`, { kind: request.kind, id: request.artefact }]]);
    if (request.kind === 'binding') {
      for (const [src, dsts] of Object.entries(resolved.links)) {
        for (const end of [parseLinkUrl(src, 'source', 'links'), ...dsts.map((d) => parseLinkUrl(d, 'destination', 'links'))]) {
          parts.set(`${end.kind}/${end.artefact}`, { kind: end.kind, id: end.artefact });
        }
      }
    }
    return [...parts.values()]
      .filter(({ kind, id }) => !this.repository.isSystem(kind, id))
      .map(({ kind, id }) => ({ kind, artefact: this.repository.get(kind, id) }));
  }
}

/** The store with its `restore` extended: each instance it brings back in the primary is also run on the workers. */
function restoringToWorkers(store: RuntimeStore, place: (request: InstanceRequest, resolved: Artefact) => Promise<void>): RuntimeStore {
  return {
    restore: (target) =>
      store.restore({
        publish: (kind, artefact) => target.publish(kind, artefact),
        activate: async (i: StoredInstance) => {
          const resolved = (await target.activate(i)) as Artefact;
          await place(i, resolved);
          return resolved;
        },
      }),
    storedInstance: (url) => store.storedInstance(url),
    putArtefact: (kind, artefact) => store.putArtefact(kind, artefact),
    deleteArtefact: (kind, id) => store.deleteArtefact(kind, id),
    putInstance: (instance) => store.putInstance(instance),
    deleteInstance: (url) => store.deleteInstance(url),
    close: () => store.close(),
  };
}
