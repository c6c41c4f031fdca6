import { Subject, type SchedulerLike } from '../core/rx';
import { SerialQueue } from '../core/serial-queue';
import { EddyError, conflict, invalid, notFound } from '../core/errors';
import { createLogger, type Logger } from '../core/logger';
import { nowNs } from '../core/clock';
import type { EddyEvent } from '../core/event';
import { SchemaValidator } from '../schema/artefacts';
import type { OfframpRuntime } from '../connectors/_shared/offramp';
import type { PipelineRuntime } from '../pipeline/pipeline';
import { Registries } from './registries';
import type { OperatorType } from '../pipeline/operator';
import type { OfframpType, OnrampType } from '../connectors/connector';
import type { CodecType } from '../codecs/codec';
import { Repository } from './repository';
import { OnrampInstance, commitOfframp, createOfframp, createPipeline, type InstanceEnv, type MeasurementListener } from './instances';
import { MetricsReporter } from './metrics';
import {
  SYSTEM_OFFRAMP,
  SYSTEM_PIPELINE,
  type Artefact,
  type BindingArtefact,
  type OfframpArtefact,
  type OnrampArtefact,
  type PipelineArtefact,
} from './artefacts';
import { type InstancePort, type Kind, instanceUrl, parseLinkUrl, substitute } from './urls';
import type { RuntimeStore } from './store';
import type { PublishPolicy } from './policy';
import { TapHub } from './tap';
import { observeInstance, type ObservedInstance } from './observe';
import { SharedLinks } from './shared-links';

type Live =
  | { kind: 'onramp'; onramp: OnrampInstance }
  | { kind: 'offramp'; offramp: OfframpRuntime }
  | { kind: 'pipeline'; pipeline: PipelineRuntime }
  | { kind: 'binding'; binding: BindingInstance };

interface InstanceRecord {
  readonly url: string;
  readonly kind: Kind;
  readonly artefactId: string;
  readonly instanceId: string;
  readonly live: Live;
  /** who keeps it alive: binding instance URLs, 'direct' (activated by itself) or 'system' */
  readonly users: Set<string>;
  /** what GET and DELETE of the instance return */
  readonly data: Artefact;
}

interface BindingInstance {
  readonly resolved: BindingArtefact;
  /** undoes the links from onramps (the sources) */
  readonly sourceDisconnects: (() => void)[];
  /** undoes every other link */
  readonly disconnects: (() => void)[];
  readonly uses: Set<string>;
}

export interface InstanceHealth {
  url: string;
  state: 'running' | 'paused' | 'down' | 'failed';
  reason?: string;
}

export interface Health {
  /** `ok` when every instance runs (paused by a circuit breaker counts as running) */
  status: 'ok' | 'unhealthy';
  instances: InstanceHealth[];
}

export interface ExitRequest {
  code: number;
  reason: string;
}

/** How a Runtime is built; every field is optional. */
export interface RuntimeOptions {
  /** where the runtime logs; `createLogger()` (level from EDDY_LOG, default info) when absent */
  logger?: Logger;
  /** the types it knows; the built-in ones when absent (register your own with `registerOperator` and friends) */
  registries?: Registries;
  /**
   * The clock of every timer in pipelines and connectors: operators' windows
   * and timeouts, metronome ticks, pull loops, reconnect back-off, reply
   * timeouts, metrics intervals. Pass an RxJS `TestScheduler` to run a whole
   * runtime in virtual time; real time when absent.
   */
  scheduler?: SchedulerLike;
  /** keeps artefacts and directly activated instances across restarts (`--data-dir`); nothing is kept when absent */
  store?: RuntimeStore;
  /** what published artefacts may do (paths, exit); everything when absent */
  policy?: PublishPolicy;
  /**
   * Takes each blackhole's finished measurement (its instance url, report and
   * latency histogram): a worker (`--workers N`) passes them to the primary.
   * Nothing collects them when absent.
   */
  onMeasurement?: MeasurementListener;
}

/**
 * The core behind all three faces (REST API, config files, embedding): the
 * artefact repository, the instance registry, activation and deactivation in
 * dependency order, metrics, and shutdown.
 */
export class Runtime {
  readonly registries: Registries;
  readonly repository: Repository;
  readonly logger: Logger;
  readonly scheduler: SchedulerLike | undefined;
  readonly store: RuntimeStore | undefined;
  private readonly onMeasurement: MeasurementListener | undefined;
  /** parts asking the process to exit (exit offramp, blackhole, file close_on_done) */
  readonly exitRequests = new Subject<ExitRequest>();
  /** the live taps on instance ports (GET /tap/...) */
  readonly taps: TapHub = new TapHub(this);
  private readonly instances = new Map<string, InstanceRecord>();
  /** every wired link once, counted by the bindings that declare it */
  private readonly links = new SharedLinks();
  private readonly metrics: MetricsReporter;
  private uid = 0;
  private stopping = false;
  /** instance changes and store writes, one at a time (see `exclusive`) */
  private readonly changes = new SerialQueue();
  /** the first store write that failed: from then on the stored state is behind, and the runtime asks to exit */
  private storeFailure?: Error;
  /**
   * `kind/id` of the artefacts the activation under way uses: unpublish is
   * synchronous and not queued, and must not remove one while its instance
   * is being opened (it would then run for an artefact that is gone).
   */
  private readonly activating = new Set<string>();

  constructor(options: RuntimeOptions = {}) {
    this.registries = options.registries ?? Registries.withBuiltins();
    this.logger = options.logger ?? createLogger();
    this.scheduler = options.scheduler;
    this.store = options.store;
    this.onMeasurement = options.onMeasurement;
    this.repository = new Repository(this.registries, new SchemaValidator(), options.policy);
    this.metrics = new MetricsReporter((event) => this.metricsInput(event), options.scheduler);
  }

  /** True from the moment shutdown() begins: liveness (GET /health/live) reads it. */
  get shuttingDown(): boolean {
    return this.stopping;
  }

  /** Publishes the system artefacts and starts their instances. */
  async start(): Promise<this> {
    for (const id of ['system::passthrough', 'system::metrics']) this.repository.publish('pipeline', SYSTEM_PIPELINE(id), true);
    this.repository.publish('offramp', SYSTEM_OFFRAMP('system::stdout', 'stdout'), true);
    this.repository.publish('offramp', SYSTEM_OFFRAMP('system::stderr', 'stderr'), true);
    await this.ensure({ kind: 'pipeline', artefact: 'system::metrics', instance: 'system', port: 'in' }, 'system');
    this.pipeline('/pipeline/system::metrics/system')!.start();
    await this.commit(await this.ensure({ kind: 'offramp', artefact: 'system::stdout', instance: 'system', port: 'in' }, 'system'));
    await this.commit(await this.ensure({ kind: 'offramp', artefact: 'system::stderr', instance: 'system', port: 'in' }, 'system'));
    // back what a previous run had, before anyone (config file, API) can change it
    await this.store?.restore({
      publish: (kind, artefact) => this.repository.publish(kind, artefact),
      activate: (i) => this.exclusive(() => this.activateNow(i.kind, i.artefact, i.instance, i.params)),
    });
    return this;
  }

  // ---- registering an application's own types ----

  /** Adds an operator type (an RxJS OperatorFunction factory or a ported node) usable by name in pipelines. */
  registerOperator(type: OperatorType<any>): this { // eslint-disable-line @typescript-eslint/no-explicit-any
    this.registries.operators.register(type.name, type);
    return this;
  }

  registerOnramp(type: OnrampType<any>): this { // eslint-disable-line @typescript-eslint/no-explicit-any
    this.registries.onramps.register(type.name, type);
    return this;
  }

  registerOfframp(type: OfframpType<any>): this { // eslint-disable-line @typescript-eslint/no-explicit-any
    this.registries.offramps.register(type.name, type);
    return this;
  }

  registerCodec(type: CodecType): this {
    this.registries.codecs.register(type.name, type);
    return this;
  }

  // ---- repository ----

  list(kind: Kind): string[] {
    return this.repository.list(kind);
  }

  /** Publishes at once; with a store, the artefact is stored behind the changes asked for before (await `persisted()`). */
  publish(kind: Kind, body: unknown): Artefact {
    const artefact = this.repository.publish(kind, body);
    this.persistLater((store) => store.putArtefact(kind, artefact));
    return artefact;
  }

  /** `{artefact, instances}` as the spec's state records. */
  describe(kind: Kind, id: string): { artefact: Artefact; instances: string[] } {
    const artefact = this.repository.get(kind, id);
    return { artefact, instances: this.instancesOf(kind, id) };
  }

  unpublish(kind: Kind, id: string): Artefact {
    this.repository.get(kind, id);
    if (this.repository.isSystem(kind, id)) throw conflict(`${kind} '${id}' is a system artefact and cannot be deleted`);
    const running = this.instancesOf(kind, id);
    if (running.length > 0) throw conflict(`${kind} '${id}' still has running instances: ${running.join(', ')}`);
    if (this.activating.has(`${kind}/${id}`)) throw conflict(`${kind} '${id}' is in use by an activation under way`);
    const artefact = this.repository.remove(kind, id);
    this.persistLater((store) => store.deleteArtefact(kind, id));
    return artefact;
  }

  /**
   * Resolves once every change asked for so far is in the store (at once
   * without a store); rejects if a store write failed. The API answers
   * after it, so an acknowledged change survives a kill -9.
   */
  async persisted(): Promise<void> {
    if (!this.store) return; // nothing to wait for: do not queue a publish's answer behind a slow activation
    await this.changes.idle();
    if (this.storeFailure) throw this.storeFailure;
  }

  instancesOf(kind: Kind, id: string): string[] {
    return [...this.instances.values()].filter((r) => r.kind === kind && r.artefactId === id).map((r) => r.instanceId);
  }

  // ---- instances ----

  getInstance(kind: Kind, artefactId: string, instanceId: string): Artefact {
    this.repository.get(kind, artefactId);
    const record = this.instances.get(instanceUrl(kind, artefactId, instanceId));
    if (!record) throw notFound(`instance ${instanceUrl(kind, artefactId, instanceId)} not found`);
    return record.data;
  }

  /**
   * Activates an instance. For a binding: resolve its links with the
   * parameters (`instance` is the instance id), deploy the pipelines, then
   * the offramps and onramps, then commit the offramps (two-phase: a file
   * is truncated only once every part has opened), then connect them,
   * onramps last so nothing flows before its sinks are in place. A failure
   * undoes what it did and leaves nothing running.
   */
  activate(kind: Kind, artefactId: string, instanceId: string, params: Record<string, string> = {}): Promise<Artefact> {
    return this.exclusive(async () => {
      const artefact = await this.activateNow(kind, artefactId, instanceId, params);
      await this.persistNow((store) => store.putInstance({ kind, artefact: artefactId, instance: instanceId, params: kind === 'binding' ? params : {} }));
      return artefact;
    });
  }

  /** Deactivates an instance and every instance only it kept alive. */
  deactivate(kind: Kind, artefactId: string, instanceId: string): Promise<Artefact> {
    return this.exclusive(async () => {
      const artefact = await this.deactivateNow(kind, artefactId, instanceId);
      await this.persistNow((store) => store.deleteInstance(instanceUrl(kind, artefactId, instanceId)));
      return artefact;
    });
  }

  /** A store write queued behind the changes asked for before it, so the store sees them in the same order. */
  private persistLater(write: (store: RuntimeStore) => Promise<void>): void {
    if (!this.store) return;
    // the failure is kept for persisted() and reported by persistNow
    this.exclusive(() => this.persistNow(write)).catch(() => undefined);
  }

  /**
   * A store write after a change succeeded. If it fails, memory and store
   * disagree and a restart would not bring back what the runtime now runs:
   * the runtime asks to exit (status 1) rather than carry on.
   */
  private async persistNow(write: (store: RuntimeStore) => Promise<void>): Promise<void> {
    if (!this.store) return;
    try {
      await write(this.store);
    } catch (err) {
      this.storeFailure ??= err as Error;
      this.logger.error((err as Error).message);
      this.requestExit(1, (err as Error).message);
      throw err;
    }
  }

  /**
   * Activations and deactivations run one at a time, in the order they were
   * asked for: they await sockets and files half-way, and two of them
   * interleaving there could both pass the "already running" check (twenty
   * parallel activations of one instance then wired the flow several times).
   */
  private exclusive<T>(change: () => Promise<T>): Promise<T> {
    return this.changes.run(change);
  }

  /** Activates one instance (queued by the caller); `activating` names what it uses until it ends, either way. */
  private async activateNow(kind: Kind, artefactId: string, instanceId: string, params: Record<string, string>): Promise<Artefact> {
    try {
      return await this.openInstance(kind, artefactId, instanceId, params);
    } finally {
      this.activating.clear();
    }
  }

  private async openInstance(kind: Kind, artefactId: string, instanceId: string, params: Record<string, string>): Promise<Artefact> {
    if (this.stopping) throw conflict('the runtime is shutting down');
    const artefact = this.repository.get(kind, artefactId);
    checkInstanceId(instanceId);
    const url = instanceUrl(kind, artefactId, instanceId);
    if (this.instances.has(url)) throw conflict(`instance ${url} is already running`);
    this.activating.add(`${kind}/${artefactId}`);
    if (kind !== 'binding') {
      await this.ensure({ kind, artefact: artefactId, instance: instanceId, port: 'in' }, 'direct');
      try {
        await this.commit(url);
      } catch (err) {
        this.instances.get(url)?.users.delete('direct');
        await this.release(url);
        throw err;
      }
      this.pipeline(url)?.start();
      return artefact;
    }
    const links = this.resolveLinks(artefact as BindingArtefact, { ...params, instance: instanceId });
    for (const { src, dsts } of links) for (const end of [src, ...dsts]) this.activating.add(`${end.at.kind}/${end.at.artefact}`);
    const binding: BindingInstance = { resolved: { ...(artefact as BindingArtefact), links: {} }, sourceDisconnects: [], disconnects: [], uses: new Set() };
    for (const { src, dsts } of links) binding.resolved.links[src.raw] = dsts.map((d) => d.raw);
    try {
      const order: InstancePort['kind'][] = ['pipeline', 'offramp', 'onramp'];
      const ends = links.flatMap(({ src, dsts }) => [src.at, ...dsts.map((d) => d.at)]);
      for (const kindToDeploy of order) {
        for (const end of ends.filter((e) => e.kind === kindToDeploy)) {
          const used = await this.ensure(end, url);
          binding.uses.add(used);
        }
      }
      // every part opened: only now do the sinks take effect (a file offramp truncates its file here)
      for (const used of binding.uses) await this.commit(used);
      // sinks first; then the pipelines start (a WAL may replay at once); then the sources
      const fromOnramp = (l: (typeof links)[number]) => l.src.at.kind === 'onramp';
      for (const { src, dsts } of links.filter((l) => !fromOnramp(l))) for (const dst of dsts) binding.disconnects.push(this.connect(src.at, dst.at));
      for (const used of binding.uses) this.pipeline(used)?.start();
      for (const { src, dsts } of links.filter(fromOnramp)) for (const dst of dsts) binding.sourceDisconnects.push(this.connect(src.at, dst.at));
    } catch (err) {
      // awaited, so the answer comes once everything it opened is closed again (a kv lock, a file handle)
      await this.teardownBinding(url, binding);
      throw err;
    }
    this.instances.set(url, {
      url,
      kind,
      artefactId,
      instanceId,
      live: { kind: 'binding', binding },
      users: new Set(['direct']),
      data: binding.resolved,
    });
    return binding.resolved;
  }

  private async deactivateNow(kind: Kind, artefactId: string, instanceId: string): Promise<Artefact> {
    this.repository.get(kind, artefactId);
    const url = instanceUrl(kind, artefactId, instanceId);
    const record = this.instances.get(url);
    if (!record) throw notFound(`instance ${url} not found`);
    if (record.users.has('system')) throw conflict(`instance ${url} is a system instance and cannot be deactivated`);
    const others = [...record.users].filter((u) => u !== 'direct');
    if (others.length > 0) throw conflict(`instance ${url} is in use by ${others.join(', ')}`);
    if (record.live.kind === 'binding') {
      this.instances.delete(url);
      await this.teardownBinding(url, record.live.binding);
    } else {
      record.users.delete('direct');
      await this.release(url);
    }
    return record.data;
  }

  /**
   * Stops the sources, lets in-flight events drain, closes the sinks: the
   * onramps' breakers are triggered (they stop reading), then each
   * pipeline's inputs complete (upstream pipelines first), so operators
   * holding events (a batch, open windows) flush them downstream; then the
   * offramps finish their in-flight sends and close, their acks reaching the
   * onramps, which are disconnected and closed last (a kafka onramp commits
   * what was acked as it leaves its group).
   */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.metrics.stopAll();
    const records = [...this.instances.values()];
    const bindings = records.flatMap((r) => (r.live.kind === 'binding' ? [r.live.binding] : []));
    // the sources pause (their gate holds what still comes) but stay connected and open, so that the acks
    // of what the drain flushes reach them: a kafka onramp commits those while it is still in its group
    for (const r of records) if (r.live.kind === 'onramp') r.live.onramp.runtime.contraflow({ kind: 'trigger', from: SHUTDOWN });
    drainInOrder(records.flatMap((r) => (r.live.kind === 'pipeline' ? [r.live.pipeline] : [])));
    // one turn of the event loop for synchronous sinks to flush what they buffered
    await new Promise((r) => setImmediate(r));
    await Promise.all(records.map((r) => (r.live.kind === 'offramp' ? r.live.offramp.close() : undefined)));
    for (const b of bindings) for (const undo of b.sourceDisconnects.splice(0)) undo();
    await Promise.all(records.map((r) => (r.live.kind === 'onramp' ? r.live.onramp.close() : undefined)));
    for (const b of bindings) for (const undo of b.disconnects.splice(0)) undo();
    await Promise.all(records.map((r) => (r.live.kind === 'pipeline' ? r.live.pipeline.stop() : undefined)));
    for (const r of records) this.taps.instanceStopped(r.url, 'runtime shutting down');
    this.instances.clear();
    // instances stay stored: a shutdown is not a deactivation; writes already asked for are finished first
    if (this.store) {
      await this.changes.idle();
      await this.store.close();
    }
  }

  /**
   * Whether every instance runs: an onramp whose source failed, or an
   * offramp whose sink is down (disconnected, reconnecting), is not; an
   * onramp paused by its circuit breaker runs (it waits, as it should).
   */
  health(): Health {
    const instances = [...this.instances.values()].map((r): InstanceHealth => {
      if (r.live.kind === 'onramp') {
        const { failure, breaker } = r.live.onramp.runtime;
        if (failure !== undefined) return { url: r.url, state: 'failed', reason: failure };
        if (!breaker.isOpen) return { url: r.url, state: 'paused', reason: `circuit breaker held by ${breaker.holders().join(', ')}` };
      }
      if (r.live.kind === 'offramp' && r.live.offramp.down) return { url: r.url, state: 'down', reason: 'the sink is disconnected or full' };
      return { url: r.url, state: 'running' };
    });
    const healthy = !this.stopping && instances.every((i) => i.state === 'running' || i.state === 'paused');
    return { status: healthy ? 'ok' : 'unhealthy', instances };
  }

  /** Every instance's state and counters now (GET /status, GET /metrics): read from the counters the flow keeps anyway. */
  observe(): ObservedInstance[] {
    const health = new Map(this.health().instances.map((i) => [i.url, i]));
    return [...this.instances.values()].map((r) =>
      observeInstance({ kind: r.kind, artefact: r.artefactId, instance: r.instanceId, url: r.url }, r.live, health.get(r.url)!),
    );
  }

  /** Why the live tap (GET /tap) cannot be served by this runtime, if it cannot. */
  tapUnavailable(): string | undefined {
    return undefined;
  }

  /** What /status and /metrics report: this process's instances (a cluster's primary asks its workers). */
  async observeAll(): Promise<ObservedInstance[]> {
    return this.observe();
  }

  requestExit(code: number, reason: string): void {
    this.logger.info(`Exit requested with status ${code}: ${reason}`);
    this.exitRequests.next({ code, reason });
  }

  /** The live instance objects, for embedding applications and tests. */
  onramp(url: string): OnrampInstance | undefined {
    const live = this.instances.get(url)?.live;
    return live?.kind === 'onramp' ? live.onramp : undefined;
  }

  pipeline(url: string): PipelineRuntime | undefined {
    const live = this.instances.get(url)?.live;
    return live?.kind === 'pipeline' ? live.pipeline : undefined;
  }

  offramp(url: string): OfframpRuntime | undefined {
    const live = this.instances.get(url)?.live;
    return live?.kind === 'offramp' ? live.offramp : undefined;
  }

  // ---- internals ----

  private env(): InstanceEnv {
    return {
      registries: this.registries,
      repository: this.repository,
      logger: this.logger,
      scheduler: this.scheduler,
      nextUid: () => ++this.uid,
      requestExit: (code, reason) => this.requestExit(code, reason),
      onMeasurement: this.onMeasurement,
    };
  }

  private resolveLinks(binding: BindingArtefact, params: Record<string, string>) {
    return Object.entries(binding.links).map(([srcRaw, dstRaws]) => {
      const where = `binding ${binding.id}: links`;
      const srcUrl = substitute(srcRaw, params, where);
      const src = { raw: srcUrl, at: parseLinkUrl(srcUrl, 'source', where) };
      const dsts = dstRaws.map((raw) => {
        const dstUrl = substitute(raw, params, where);
        return { raw: dstUrl, at: parseLinkUrl(dstUrl, 'destination', where) };
      });
      return { src, dsts };
    });
  }

  /** Creates the instance unless it runs already, and records `user` as keeping it alive. */
  private async ensure(at: InstancePort, user: string): Promise<string> {
    const url = instanceUrl(at.kind, at.artefact, at.instance);
    const existing = this.instances.get(url);
    if (existing) {
      existing.users.add(user);
      return url;
    }
    const artefact = this.repository.get(at.kind, at.artefact);
    const env = this.env();
    let live: Live;
    let stats: Parameters<MetricsReporter['start']>[1];
    if (at.kind === 'pipeline') {
      const pipeline = createPipeline(url, artefact as PipelineArtefact, env);
      live = { kind: 'pipeline', pipeline };
      stats = { kind: 'pipeline', pipeline };
    } else if (at.kind === 'offramp') {
      const offramp = await createOfframp(url, artefact as OfframpArtefact, env);
      live = { kind: 'offramp', offramp };
      stats = { kind: 'ramp', counters: offramp.counters };
    } else {
      const onramp = await OnrampInstance.create(url, artefact as OnrampArtefact, env);
      live = { kind: 'onramp', onramp };
      stats = { kind: 'ramp', counters: onramp.runtime.counters };
    }
    // the url may have been taken while a ramp was opening
    if (this.instances.has(url)) {
      if (live.kind === 'offramp') await live.offramp.close();
      if (live.kind === 'onramp') await live.onramp.close();
      return this.ensure(at, user);
    }
    this.instances.set(url, { url, kind: at.kind, artefactId: at.artefact, instanceId: at.instance, live, users: new Set([user]), data: artefact });
    const interval = (artefact as { metrics_interval_s?: number }).metrics_interval_s;
    if (interval && url !== '/pipeline/system::metrics/system') this.metrics.start(url, stats, interval);
    return url;
  }

  /** An offramp's second phase of opening (see `Sink.commit`); once per instance, nothing for other kinds. */
  private async commit(url: string): Promise<void> {
    const record = this.instances.get(url);
    if (record?.live.kind === 'offramp') await commitOfframp(record.data as OfframpArtefact, record.live.offramp);
  }

  /** Drops an instance nothing uses any more. */
  private async release(url: string): Promise<void> {
    const record = this.instances.get(url);
    if (!record || record.users.size > 0) return;
    this.instances.delete(url);
    this.metrics.stop(url);
    if (record.live.kind === 'pipeline') await record.live.pipeline.stop();
    if (record.live.kind === 'offramp') await record.live.offramp.close();
    if (record.live.kind === 'onramp') await record.live.onramp.close();
    this.taps.instanceStopped(url);
  }

  private async teardownBinding(url: string, binding: BindingInstance): Promise<void> {
    for (const disconnect of binding.sourceDisconnects.splice(0)) disconnect();
    for (const disconnect of binding.disconnects.splice(0).reverse()) disconnect();
    // onramps first, so nothing new flows into what is released next
    const order = ['onramp', 'pipeline', 'offramp'];
    const used = [...binding.uses].sort((a, b) => order.indexOf(a.split('/')[1]) - order.indexOf(b.split('/')[1]));
    for (const u of used) {
      this.instances.get(u)?.users.delete(url);
      await this.release(u);
    }
  }

  /**
   * Holds one use of a link, wiring it if no binding holds it yet, and
   * returns how to release that use: a link two bindings declare is one
   * connection (wired twice, every event on it went out twice).
   */
  private connect(src: InstancePort, dst: InstancePort): () => void {
    return this.links.hold(linkKey(src, dst), () => this.wire(src, dst));
  }

  /** How many bindings hold the link (0 when it is not wired): for tests and diagnostics. */
  linkUses(src: InstancePort, dst: InstancePort): number {
    return this.links.uses(linkKey(src, dst));
  }

  /** Wires one link and returns how to undo it. */
  private wire(src: InstancePort, dst: InstancePort): () => void {
    const where = `link ${instanceUrl(src.kind, src.artefact, src.instance)}/${src.port} -> ${instanceUrl(dst.kind, dst.artefact, dst.instance)}/${dst.port}`;
    const from = this.instances.get(instanceUrl(src.kind, src.artefact, src.instance))!.live;
    const to = this.instances.get(instanceUrl(dst.kind, dst.artefact, dst.instance))!.live;
    if (from.kind === 'onramp' && to.kind === 'pipeline') {
      if (src.port !== 'out' && src.port !== 'err') throw invalid(`${where}: an onramp has ports out and err`);
      const input = pipelineInput(to.pipeline, dst.port, where);
      const stream = src.port === 'out' ? from.onramp.out$ : from.onramp.err$;
      to.pipeline.addSource(from.onramp.runtime);
      if (src.port === 'err') from.onramp.noteErrConnected();
      const sub = stream.subscribe(input);
      return () => {
        sub.unsubscribe();
        to.pipeline.removeSource(from.onramp.runtime);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'offramp') {
      if (dst.port !== 'in') throw invalid(`${where}: an offramp receives on port in`);
      const output = pipelineOutput(from.pipeline, src.port, where);
      const sub = output.subscribe(to.offramp.connect(from.pipeline));
      return () => {
        sub.unsubscribe();
        to.offramp.disconnect(from.pipeline);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'pipeline') {
      const output = pipelineOutput(from.pipeline, src.port, where);
      const sub = output.subscribe(pipelineInput(to.pipeline, dst.port, where));
      to.pipeline.addSource(from.pipeline);
      return () => {
        sub.unsubscribe();
        to.pipeline.removeSource(from.pipeline);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'onramp') {
      const output = pipelineOutput(from.pipeline, src.port, where);
      const sub = output.subscribe((event) => to.onramp.runtime.reply(event));
      return () => sub.unsubscribe();
    }
    if (from.kind === 'offramp' && to.kind === 'pipeline') {
      const sub = from.offramp.output(src.port).subscribe(pipelineInput(to.pipeline, dst.port, where));
      return () => sub.unsubscribe();
    }
    throw invalid(`${where}: ${article(src.kind)} cannot be linked to ${article(dst.kind)}: a pipeline goes between them (system::passthrough passes events on unchanged)`);
  }

  private metricsInput(event: Record<string, unknown>): void {
    const pipeline = this.pipeline('/pipeline/system::metrics/system');
    if (!pipeline) return;
    const e: EddyEvent = {
      id: { uid: 0, seq: 0 },
      data: event,
      meta: {},
      ingestNs: nowNs(),
      originUri: 'svc-metrics://localhost',
      isBatch: false,
      transactional: false,
    };
    pipeline.input('in').next(e);
  }
}

/** Who triggers every onramp's breaker when the runtime shuts down. */
const SHUTDOWN = 'runtime shutdown';

/** Completes the pipelines' inputs, each after every pipeline feeding it. */
function drainInOrder(pipelines: PipelineRuntime[]): void {
  const pending = new Set(pipelines);
  while (pending.size > 0) {
    const ready = [...pending].filter((p) => !p.upstreamPipelines().some((u) => pending.has(u)));
    // a cycle of pipelines (never built by activation, but cheap to guard): drain the rest as they are
    for (const p of ready.length > 0 ? ready : [...pending]) {
      p.drain();
      pending.delete(p);
    }
  }
}

/** `an onramp`, `a pipeline`: for messages. */
function article(kind: string): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

function linkKey(src: InstancePort, dst: InstancePort): string {
  return `${instanceUrl(src.kind, src.artefact, src.instance)}/${src.port} -> ${instanceUrl(dst.kind, dst.artefact, dst.instance)}/${dst.port}`;
}

function checkInstanceId(id: string): void {
  if (!/^[a-z][a-zA-Z_:]*$/.test(id)) throw invalid(`instance id '${id}' must match ^[a-z][a-zA-Z_:]*$`);
}

function pipelineInput(p: PipelineRuntime, port: string, where: string) {
  if (!p.inputs.has(port)) throw invalid(`${where}: pipeline has no input '${port}' (inputs: ${[...p.inputs.keys()].join(', ')})`);
  return p.input(port);
}

function pipelineOutput(p: PipelineRuntime, port: string, where: string) {
  if (!p.outputs.has(port)) throw invalid(`${where}: pipeline has no output '${port}' (outputs: ${[...p.outputs.keys()].join(', ')})`);
  return p.output(port);
}

export { EddyError };
