import { Subject, type SchedulerLike } from '../core/rx';
import { EddyError, conflict, notFound } from '../core/errors';
import { createLogger, maskingLogger, type Logger } from '../core/logger';
import { nowNs } from '../core/clock';
import type { EddyEvent } from '../core/event';
import { SchemaValidator } from '../schema/artefacts';
import type { OfframpRuntime } from '../ramps/offramp';
import type { PipelineRuntime } from '../pipeline/pipeline';
import type { AnyOperatorType } from '../pipeline/operator';
import type { AnyOfframpType, AnyOnrampType, SharedListeners } from '../connectors/connector';
import type { CodecType } from '../codecs/codec';
import { Registries } from './registries';
import { Repository } from './repository';
import type { InstanceEnv, MeasurementListener, OnrampInstance } from './instances';
import type { Artefact, BindingArtefact, StoredPipeline } from './artefacts';
import { SYSTEM_ARTEFACTS } from '../system-artefacts';
import { type InstancePort, type Kind, instanceUrl } from './urls';
import type { RuntimeStore } from './store';
import type { PublishPolicy } from './policy';
import { LiveInstances } from './live';
import { LinkWiring } from './wiring';
import { Activation, METRICS_PIPELINE, type BindingRequest } from './activation';
import { Persistence } from './persistence';
import { stopInstances } from './shutdown';
import { MetricsReporter } from './observe/metrics';
import { TapHub } from './observe/tap';
import { observeInstance, type ObservedInstance } from './observe/observe';
import { type Health, health, instanceHealth } from './observe/health';

export type { Health, InstanceHealth } from './observe/health';
export type { BindingRequest } from './activation';

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
  /**
   * Where onramps bind the listening sockets of long-lived connections (tcp):
   * a worker (`--workers N`) has its primary listen and hand it connections.
   * In this process when absent.
   */
  sharedListeners?: SharedListeners;
}

/**
 * The core behind all three faces (REST API, config files, embedding): the
 * artefact repository, the instance registry, activation and deactivation in
 * dependency order, metrics, and shutdown. A façade: activation
 * (`activation.ts`), link wiring (`wiring.ts`), persistence and the order of
 * changes (`persistence.ts`), shutdown (`shutdown.ts`) and observation
 * (`observe/`) each live in their own module; this class holds them together
 * and is the API.
 */
export class Runtime {
  readonly registries: Registries;
  readonly repository: Repository;
  readonly logger: Logger;
  readonly scheduler: SchedulerLike | undefined;
  readonly store: RuntimeStore | undefined;
  /** parts asking the process to exit (exit offramp, blackhole, file close_on_done) */
  readonly exitRequests = new Subject<ExitRequest>();
  /** the live taps on instance ports (GET /tap/...) */
  readonly taps: TapHub = new TapHub(this);
  private readonly instances = new LiveInstances();
  private readonly wiring = new LinkWiring(this.instances);
  private readonly metrics: MetricsReporter;
  private readonly persistence: Persistence;
  private readonly activation: Activation;
  private stopping = false;

  constructor(options: RuntimeOptions = {}) {
    this.registries = options.registries ?? Registries.withBuiltins();
    // a logger of the application's own gets its lines masked as eddy's own are (core/redact.ts)
    this.logger = options.logger === undefined ? createLogger() : maskingLogger(options.logger);
    this.scheduler = options.scheduler;
    this.store = options.store;
    this.repository = new Repository(this.registries, new SchemaValidator(), options.policy);
    this.metrics = new MetricsReporter((event) => this.metricsInput(event), options.scheduler);
    this.persistence = new Persistence(options.store, this.logger, (code, reason) => this.requestExit(code, reason));
    this.activation = new Activation({
      repository: this.repository,
      instances: this.instances,
      wiring: this.wiring,
      metrics: this.metrics,
      taps: this.taps,
      env: this.instanceEnv(options.onMeasurement, options.sharedListeners),
      shuttingDown: () => this.stopping,
    });
  }

  /** True from the moment shutdown() begins: liveness (GET /health/live) reads it. */
  get shuttingDown(): boolean {
    return this.stopping;
  }

  /** Publishes the system artefacts and starts their instances. */
  async start(): Promise<this> {
    this.publishSystem();
    await this.activation.startSystem();
    // back what a previous run had, before anyone (config file, API) can change it
    await this.store?.restore({
      publish: (kind, artefact) => this.repository.publish(kind, artefact),
      activate: (i) => this.persistence.exclusive(() => this.activation.activate(i.kind, i.artefact, i.instance, i.params)),
    });
    return this;
  }

  /**
   * Publishes the system artefacts (system::passthrough, system::metrics,
   * system::stdout, system::stderr) without starting their instances, as
   * `start()` does first: what `eddy validate` checks configs against in a
   * runtime that opens nothing.
   */
  publishSystem(): this {
    for (const { kind, artefact } of SYSTEM_ARTEFACTS) this.repository.publish(kind, artefact, true);
    return this;
  }

  // ---- registering an application's own types ----

  /** Adds an operator type (an RxJS OperatorFunction factory or a ported node) usable by name in pipelines. */
  registerOperator(type: AnyOperatorType): this {
    this.registries.operators.register(type.name, type);
    return this;
  }

  registerOnramp(type: AnyOnrampType): this {
    this.registries.onramps.register(type.name, type);
    return this;
  }

  registerOfframp(type: AnyOfframpType): this {
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
    this.persistence.later((store) => store.putArtefact(kind, artefact));
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
    if (this.activation.isActivating(kind, id)) throw conflict(`${kind} '${id}' is in use by an activation under way`);
    const artefact = this.repository.remove(kind, id);
    this.persistence.later((store) => store.deleteArtefact(kind, id));
    return artefact;
  }

  /**
   * Resolves once every change asked for so far is in the store (at once
   * without a store); rejects if a store write failed. The API answers
   * after it, so an acknowledged change survives a kill -9.
   */
  persisted(): Promise<void> {
    return this.persistence.persisted();
  }

  instancesOf(kind: Kind, id: string): string[] {
    return this.instances.instancesOf(kind, id);
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
   * undoes what it did and leaves nothing running. Activations and
   * deactivations run one at a time, in the order they were asked for.
   */
  activate(kind: Kind, artefactId: string, instanceId: string, params: Record<string, string> = {}): Promise<Artefact> {
    return this.persistence.exclusive(async () => {
      const artefact = await this.activation.activate(kind, artefactId, instanceId, params);
      const stored = { kind, artefact: artefactId, instance: instanceId, params: kind === 'binding' ? params : {} };
      await this.persistence.now((store) => store.putInstance(stored));
      return artefact;
    });
  }

  /**
   * Activates several binding instances all or nothing, as one activation
   * (a config file's mappings): every check of every one runs before any
   * part opens, and no offramp commits (truncates a file) before every part
   * of every one has opened. A failure leaves none of them running.
   */
  activateBindings(requests: readonly BindingRequest[]): Promise<Artefact[]> {
    return this.persistence.exclusive(async () => {
      const artefacts = await this.activation.activateBindings(requests);
      for (const r of requests)
        await this.persistence.now((store) => store.putInstance({ kind: 'binding', artefact: r.binding, instance: r.instance, params: r.params }));
      return artefacts;
    });
  }

  /**
   * Throws what activating the binding instance would be refused for before
   * anything opened (ids, links, ports), without opening anything;
   * `artefact` looks artefacts up (the repository's by default: a reload
   * passes the ones it is about to publish). Returns the binding with its
   * links resolved, as the activation would run it.
   */
  checkActivation(request: BindingRequest, artefact?: (kind: Kind, id: string) => Artefact): BindingArtefact {
    return this.activation.check(request, artefact).resolved;
  }

  /**
   * Runs `change` as one change of the runtime: no activation or
   * deactivation asked for meanwhile (by the API, a reload) starts before
   * it has ended, and the runtime's own `activate`, `activateBindings` and
   * `deactivate` called from inside it run at once, as parts of it (a whole
   * config applied over the API: its activations, and its rollback when one
   * fails). Publishing is synchronous and not queued; the store writes it
   * asks for follow the change. Await `persisted()` after it, never inside.
   */
  exclusive<T>(change: () => Promise<T>): Promise<T> {
    return this.persistence.exclusive(change);
  }

  /**
   * Every check `activateBindings` makes before anything opens, with
   * nothing opened: the instances the activation would open (a dry run,
   * `eddy validate`); `artefact` looks artefacts up as for
   * `checkActivation`. Not queued behind changes under way: it changes
   * nothing.
   */
  planBindings(requests: readonly BindingRequest[], artefact?: (kind: Kind, id: string) => Artefact): InstancePort[] {
    return this.activation.planBindings(requests, artefact);
  }

  /**
   * Replaces a published pipeline by a new version of it (the same id)
   * while its instances run: each running instance is swapped in place,
   * its onramps paused meanwhile and never stopped, the old version drained
   * to the offramps (swap.ts). Refused (409), with nothing changed, when an
   * instance cannot be swapped (`pipelineSwapBlocker`); an invalid artefact
   * is a 400. The store keeps the new version.
   */
  replacePipeline(body: unknown): Promise<Artefact> {
    return this.persistence.exclusive(async () => {
      const artefact = this.repository.validate('pipeline', body) as StoredPipeline;
      const { id } = artefact;
      this.repository.get('pipeline', id);
      if (this.repository.isSystem('pipeline', id)) throw conflict(`pipeline '${id}' is a system artefact and cannot be replaced`);
      await this.activation.swapPipelines(
        this.instancesOf('pipeline', id).map((i) => instanceUrl('pipeline', id, i)),
        artefact,
      );
      this.repository.remove('pipeline', id);
      const stored = this.repository.publish('pipeline', artefact);
      this.persistence.later((store) => store.putArtefact('pipeline', stored));
      return stored;
    });
  }

  /**
   * Why the running pipeline instance `url` cannot be swapped in place for
   * the pipeline `body` (a new version of its artefact), or undefined when
   * it can: kept by one binding only, fed by onramps only, feeding offramps
   * only, no exactly-once source or checkpointing WAL in its flow.
   */
  pipelineSwapBlocker(url: string, body: unknown): string | undefined {
    return this.activation.swapBlocker(url, this.repository.validate('pipeline', body) as StoredPipeline);
  }

  /** Who keeps the instance alive: binding instance URLs, 'direct' (activated by itself) or 'system'; none when it does not run. */
  usersOf(url: string): string[] {
    return [...(this.instances.get(url)?.users ?? [])];
  }

  /** The values the running binding instance was activated with (its mapping's). */
  activatedWith(binding: string, instance: string): Record<string, string> {
    const record = this.instances.get(instanceUrl('binding', binding, instance));
    if (record?.live.kind !== 'binding') throw notFound(`instance ${instanceUrl('binding', binding, instance)} not found`);
    return { ...record.live.binding.params };
  }

  /** Deactivates an instance and every instance only it kept alive. */
  deactivate(kind: Kind, artefactId: string, instanceId: string): Promise<Artefact> {
    return this.persistence.exclusive(async () => {
      const artefact = await this.activation.deactivate(kind, artefactId, instanceId);
      await this.persistence.now((store) => store.deleteInstance(instanceUrl(kind, artefactId, instanceId)));
      return artefact;
    });
  }

  /** How many bindings hold the link (0 when it is not wired): for tests and diagnostics. */
  linkUses(src: InstancePort, dst: InstancePort): number {
    return this.wiring.uses(src, dst);
  }

  /**
   * Stops the sources, lets in-flight events drain, closes the sinks, in the
   * order `stopInstances` (shutdown.ts) gives; then every tap ends. The
   * instances stay stored: a shutdown is not a deactivation; store writes
   * already asked for are finished before the store closes.
   */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.metrics.stopAll();
    const records = this.instances.all();
    await stopInstances(records);
    for (const r of records) this.taps.instanceStopped(r.url, 'runtime shutting down');
    this.instances.clear();
    await this.persistence.close();
  }

  // ---- observing ----

  /**
   * Whether every instance runs: an onramp whose source failed, or an
   * offramp whose sink is down (disconnected, reconnecting), is not; an
   * onramp paused by its circuit breaker runs (it waits, as it should).
   */
  health(): Health {
    return health(
      this.instances.all().map((r) => instanceHealth(r.url, r.live)),
      this.stopping,
    );
  }

  /** Every instance's state and counters now (GET /status, GET /metrics): read from the counters the flow keeps anyway. */
  observe(): ObservedInstance[] {
    // each instance's health as this runtime's health() gives it (instanceHealth), asked of the instance itself
    return this.instances
      .all()
      .map((r) => observeInstance({ kind: r.kind, artefact: r.artefactId, instance: r.instanceId, url: r.url }, r.live, instanceHealth(r.url, r.live)));
  }

  /** Why the live tap (GET /tap) cannot be served by this runtime, if it cannot. */
  tapUnavailable(): string | undefined {
    return undefined;
  }

  /** What /status and /metrics report: this process's instances (a cluster's primary asks its workers). */
  observeAll(): Promise<ObservedInstance[]> {
    return Promise.resolve(this.observe());
  }

  requestExit(code: number, reason: string): void {
    this.logger.info(`Exit requested with status ${code}: ${reason}`);
    this.exitRequests.next({ code, reason });
  }

  /** The live instance objects, for embedding applications and tests. */
  onramp(url: string): OnrampInstance | undefined {
    return this.instances.onramp(url);
  }

  pipeline(url: string): PipelineRuntime | undefined {
    return this.instances.pipeline(url);
  }

  offramp(url: string): OfframpRuntime | undefined {
    return this.instances.offramp(url);
  }

  // ---- internals ----

  /** What every instance is built with. */
  private instanceEnv(onMeasurement: MeasurementListener | undefined, sharedListeners: SharedListeners | undefined): InstanceEnv {
    let uid = 0;
    return {
      registries: this.registries,
      repository: this.repository,
      logger: this.logger,
      scheduler: this.scheduler,
      nextUid: () => ++uid,
      dataDir: this.store?.dir,
      requestExit: (code, reason) => this.requestExit(code, reason),
      onMeasurement,
      sharedListeners,
    };
  }

  /** A metrics report, as an event into the system::metrics pipeline. */
  private metricsInput(event: Record<string, unknown>): void {
    const pipeline = this.pipeline(METRICS_PIPELINE);
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

export { EddyError };
