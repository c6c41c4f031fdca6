/**
 * The primary's side of the workers (node:cluster): forks them, asks them
 * to activate and deactivate (every worker that must run an activation, or
 * none: a failure on one rolls back the others), keeps their latest health,
 * gathers their metrics and blackhole measurements, and drains them on
 * shutdown. A worker that dies is started again with back-off (its
 * instances are then activated on it again by the ClusterRuntime, which
 * hears of it through `restarted`), and given up after too many deaths in a
 * row (restart-policy.ts, docs/workers.md).
 */
import cluster, { type Worker } from 'node:cluster';
import { join } from 'node:path';
import { Subject } from '../core/rx';
import { EddyError } from '../core/errors';
import type { Logger } from '../core/logger';
import type { Artefact } from '../runtime/artefacts';
import type { ExitRequest, Health, InstanceHealth } from '../runtime/runtime';
import type { Kind } from '../runtime/urls';
import type { BlackholeReport } from '../connectors/blackhole/offramp';
import { combineMeasurements } from './measurements';
import { combineObserved, type ObservedInstance } from '../runtime/observe/observe';
import { combineMetrics, type InstanceMetrics } from './metrics';
import { WORKER_ID_ENV, type FromWorker, type InstanceRequest, type ToWorker, type WorkerReport } from './protocol';
import { DEFAULT_RESTART_POLICY, RestartPolicy, type RestartPolicyOptions } from './restart-policy';
import { ConnectionBalancer } from './balancer';

/** How long a draining worker may take before it is killed (SIGKILL). */
const DRAIN_TIMEOUT_MS = 30_000;
/** How long an exit asked for by one worker's blackhole waits for the others' measurements of the same instance. */
const MEASUREMENT_WAIT_MS = 10_000;

/** A health entry of the primary: an instance in one worker, or a worker itself (`/worker/N`). */
export interface WorkerInstanceHealth extends InstanceHealth {
  worker: number;
  /** the worker's process id (on `/worker/N` entries) */
  pid?: number;
}

/** What one worker reported when asked (`WorkerPool.report`). */
export interface WorkerStatus extends WorkerReport {
  worker: number;
  pid: number;
}

/** One worker process in its place `id`; a restart puts a new Slot in the same place. */
interface Slot {
  readonly id: number;
  readonly worker: Worker;
  readonly pid: number;
  /** when it said it was ready (Date.now()) */
  readyAt?: number;
  /** why it is gone; undefined while it runs */
  gone?: string;
  /** while gone: the restart that is coming, or why there is none */
  next?: { restart: true; attempt: number; timer: NodeJS.Timeout } | { restart: false; why: string };
  health?: Health;
  /** instances that could not be activated again on it after its restart */
  lostInstances?: InstanceHealth[];
}

/** A message to a worker that is answered, before its id is given. */
type WorkerRequest = ToWorker extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

interface Measurement {
  worker: number;
  report: BlackholeReport;
  histogram: string;
}

/**
 * Node 24+ lets V8's young generation grow to twice Node 20's (semi-spaces
 * of 32 MB), which put a kafka flow's RSS past 300 MB; 16 MB keeps it below
 * at no measured throughput cost (bench/README.md, "Memory on Node 24+").
 * The flag works only on a Node command line, so eddy sets it where it
 * starts a Node itself: its workers (and `npm start`).
 */
export const YOUNG_GENERATION_ARG = '--max-semi-space-size=16';

/** A worker's Node flags: the primary's, with the young generation's limit unless the user set one (flags or NODE_OPTIONS). */
export function workerExecArgv(execArgv: readonly string[], nodeOptions: string = process.env.NODE_OPTIONS ?? ''): string[] {
  const userSet = [...execArgv, nodeOptions].some((arg) => arg.includes('--max-semi-space-size'));
  return userSet ? [...execArgv] : [...execArgv, YOUNG_GENERATION_ARG];
}

export class WorkerPool {
  /** exit requests from the workers' instances, to exit the whole server with that code */
  readonly exitRequests = new Subject<ExitRequest>();
  /** a worker that died is ready again (its id): its instances are to be activated on it again */
  readonly restarted = new Subject<number>();
  private readonly slots: Slot[] = [];
  /** per place, its deaths in a row and the delay of the next restart */
  private readonly policies: RestartPolicy[] = [];
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; worker: number }>();
  private nextRequest = 0;
  private stopping = false;
  /** blackhole measurements per offramp instance url, until every worker running it has sent its own */
  private readonly measurements = new Map<string, { parts: Measurement[]; timer: NodeJS.Timeout }>();
  /** an exit asked for while measurements of the same instance were still to come */
  private deferredExit?: ExitRequest;
  /** the listening sockets of the workers' tcp onramps, and who holds how many of their connections */
  readonly connections: ConnectionBalancer;

  private constructor(
    private readonly logger: Logger,
    private readonly restartPolicy: RestartPolicyOptions,
  ) {
    this.connections = new ConnectionBalancer((id, message, socket) => {
      // an id the balancer holds: maybe of no worker now
      const slot = this.slots[id] as Slot | undefined;
      if (!slot || slot.gone !== undefined || !slot.worker.isConnected()) return false;
      // a send that fails (the worker died meanwhile) ends the connection: its client connects again
      slot.worker.send(message, socket, (err) => err && socket?.destroy());
      return true;
    }, logger);
  }

  /** Forks `count` workers and resolves once each is ready; rejects (killing those started) if one fails to start. */
  static async start(count: number, logger: Logger, restartPolicy: RestartPolicyOptions = DEFAULT_RESTART_POLICY): Promise<WorkerPool> {
    const pool = new WorkerPool(logger, restartPolicy);
    cluster.setupPrimary({ exec: join(__dirname, 'worker.js'), args: [], execArgv: workerExecArgv(process.execArgv), serialization: 'advanced' });
    const ready: Promise<void>[] = [];
    for (let id = 0; id < count; id++) ready.push(pool.fork(id));
    try {
      await Promise.all(ready);
    } catch (err) {
      await pool.shutdown();
      throw err;
    }
    return pool;
  }

  get size(): number {
    return this.slots.length;
  }

  /** The ids of every worker, running or gone. */
  all(): number[] {
    return this.slots.map((s) => s.id);
  }

  /** The ids of the workers still running. */
  alive(): number[] {
    return this.slots.filter((s) => s.gone === undefined).map((s) => s.id);
  }

  private fork(id: number): Promise<void> {
    const worker = cluster.fork({ [WORKER_ID_ENV]: String(id) });
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- undefined only when the spawn failed, which the worker's exit reports; the slot keeps what Node gives until then, as it always did
    const slot: Slot = { id, worker, pid: worker.process.pid! };
    this.slots[id] = slot;
    this.policies[id] ??= new RestartPolicy(this.restartPolicy);
    return new Promise((resolve, reject) => {
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') {
          slot.readyAt = Date.now();
          this.logger.info(`worker ${id} ready (pid ${slot.pid})`);
          resolve();
        } else this.received(slot, message);
      });
      worker.on('exit', (code, signal) => {
        slot.gone = signal ? `exited with signal ${signal}` : `exited with status ${code}`;
        reject(new Error(`worker ${id} (pid ${slot.pid}) ${slot.gone} before it was ready`));
        this.lost(slot);
      });
    });
  }

  /**
   * A worker died while the server runs: start it again after the policy's
   * delay, or give it up. Once the new one is ready, `restarted` tells the
   * ClusterRuntime, which activates its instances on it again.
   */
  private superviseDeath(slot: Slot): void {
    const decision = this.policies[slot.id].died(slot.readyAt === undefined ? undefined : Date.now() - slot.readyAt);
    if (!decision.restart) {
      const why = `given up after ${decision.deaths} deaths in a row, each within ${this.restartPolicy.stableMs / 1000} s of its start`;
      slot.next = { restart: false, why };
      this.logger.error(`worker ${slot.id} (pid ${slot.pid}) ${slot.gone}; ${why}: its instances are gone until the server restarts`);
      return;
    }
    const timer = setTimeout(() => this.restart(slot.id), decision.delayMs);
    slot.next = { restart: true, attempt: decision.attempt, timer };
    this.logger.error(`worker ${slot.id} (pid ${slot.pid}) ${slot.gone}; restarting it in ${decision.delayMs} ms (restart ${decision.attempt} in a row)`);
  }

  private restart(id: number): void {
    if (this.stopping) return;
    this.fork(id).then(
      () => {
        this.logger.warn(`worker ${id} restarted (pid ${this.slots[id].pid}); activating its instances again`);
        this.restarted.next(id);
      },
      // it died before it was ready: its exit has been supervised like any other death
      () => undefined,
    );
  }

  /** An instance could not be activated again on a restarted worker: health shows it failed there. */
  lostOnRestart(id: number, url: string, reason: string): void {
    const slot = this.slots[id];
    (slot.lostInstances ??= []).push({ url, state: 'failed', reason: `not activated again after worker ${id} restarted: ${reason}` });
  }

  /** Why a worker is not running (for errors and health); undefined while it runs. */
  private absence(slot: Slot): string | undefined {
    if (slot.gone === undefined) return undefined;
    const base = `worker ${slot.id} (pid ${slot.pid}) ${slot.gone}`;
    if (slot.next?.restart === true) return `${base}; restarting (restart ${slot.next.attempt} in a row)`;
    if (slot.next?.restart === false) return `${base}; ${slot.next.why}`;
    return base;
  }

  private received(slot: Slot, message: FromWorker): void {
    if (message.type === 'reply') {
      const waiting = this.pending.get(message.id);
      slot.health = message.health;
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.ok) waiting.resolve(message.value);
      else waiting.reject(new EddyError(message.error.code, message.error.message));
    } else if (message.type === 'health') slot.health = message.health;
    else if (message.type === 'measurement') this.measured(slot, message.url, message.report, message.histogram);
    else if (message.type === 'exit') this.exitAsked(slot, { code: message.code, reason: message.reason });
    else if (message.type === 'listen') this.listenFor(slot, message);
    else if (message.type === 'unlisten') this.connections.unlisten(slot.id, message.listener);
    else if (message.type === 'connection-closed') this.connections.closed(slot.id, message.listener);
  }

  /** A worker's onramp binds a connection listener: the primary listens (or already does) and answers with the port or why not. */
  private listenFor(slot: Slot, message: Extract<FromWorker, { type: 'listen' }>): void {
    const answer = (reply: ToWorker) => {
      if (slot.gone === undefined && slot.worker.isConnected()) slot.worker.send(reply);
    };
    this.connections.listen(slot.id, message.listener, message.host, message.port).then(
      (port) => {
        // it died while the port was bound: it listens for nothing
        if (slot.gone !== undefined) this.connections.unlisten(slot.id, message.listener);
        answer({ type: 'listened', request: message.request, ok: true, port });
      },
      (err: unknown) => answer({ type: 'listened', request: message.request, ok: false, error: (err as Error).message }),
    );
  }

  /** A worker is gone: its requests fail; unless the server is stopping, it is restarted or given up (health shows which). */
  private lost(slot: Slot): void {
    for (const [id, waiting] of this.pending) {
      if (waiting.worker !== slot.id) continue;
      this.pending.delete(id);
      waiting.reject(new EddyError('internal', `worker ${slot.id} (pid ${slot.pid}) ${slot.gone}`));
    }
    this.connections.gone(slot.id);
    if (!this.stopping) this.superviseDeath(slot);
    for (const url of this.measurements.keys()) this.completeIfAll(url);
  }

  private request(id: number, message: WorkerRequest): Promise<unknown> {
    // an id from a placement: maybe of no worker
    const slot = this.slots[id] as Slot | undefined;
    if (!slot || slot.gone !== undefined) {
      // an activation runs on every worker its placement names or on none: nothing new is placed on a worker that is down
      return Promise.reject(
        new EddyError('conflict', slot ? `${this.absence(slot)}: try again once GET /health shows it running` : `worker ${id} does not exist`),
      );
    }
    const requestId = ++this.nextRequest;
    return new Promise((resolve, reject) => {
      this.pending.set(requestId, { resolve, reject, worker: id });
      slot.worker.send({ ...message, id: requestId });
    });
  }

  /**
   * Activates on every worker in `workers`, side by side. Resolves once all
   * succeeded; otherwise deactivates it again on those that succeeded and
   * rejects with the first failure.
   */
  async activate(workers: number[], request: InstanceRequest, artefacts: { kind: Kind; artefact: Artefact }[]): Promise<void> {
    const results = await Promise.allSettled(workers.map((w) => this.request(w, { type: 'activate', request, artefacts })));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ worker: workers[i], error: r.reason as Error }] : []));
    if (failed.length === 0) return;
    const succeeded = workers.filter((_w, i) => results[i].status === 'fulfilled');
    for (const f of failed) this.logger.warn(`worker ${f.worker}: ${f.error.message}`);
    await this.deactivate(succeeded, request);
    throw failed[0].error;
  }

  /** Deactivates on the workers in `workers` that still run; a failure is logged (the primary has let the instance go already). */
  async deactivate(workers: number[], request: InstanceRequest): Promise<void> {
    const running = workers.filter((w) => this.slots[w]?.gone === undefined);
    const results = await Promise.allSettled(running.map((w) => this.request(w, { type: 'deactivate', request })));
    results.forEach((r, i) => {
      if (r.status === 'rejected')
        this.logger.error(`worker ${running[i]}: deactivating /${request.kind}/${request.artefact}/${request.instance}: ${(r.reason as Error).message}`);
    });
  }

  /**
   * Health over every worker, from what each reported last (after each
   * change and every second): each instance once per worker that runs it,
   * tagged with the worker, and one `/worker/N` entry per worker; a worker
   * that is gone is `failed` and makes the whole `unhealthy`.
   */
  health(): Health {
    const instances: WorkerInstanceHealth[] = [];
    let healthy = !this.stopping;
    for (const slot of this.slots) {
      if (slot.gone !== undefined) {
        healthy = false;
        // restarting: down for now; given up: failed, which fails liveness too (only a restart of the server brings it back)
        const state = slot.next?.restart === false ? 'failed' : 'down';
        instances.push({ url: `/worker/${slot.id}`, state, reason: this.absence(slot), worker: slot.id, pid: slot.pid });
        continue;
      }
      instances.push({ url: `/worker/${slot.id}`, state: 'running', worker: slot.id, pid: slot.pid });
      for (const i of slot.health?.instances ?? []) instances.push({ ...i, worker: slot.id });
      for (const i of slot.lostInstances ?? []) instances.push({ ...i, worker: slot.id });
      if (slot.lostInstances?.length) healthy = false;
      if (slot.health?.status === 'unhealthy') healthy = false;
    }
    return { status: healthy ? 'ok' : 'unhealthy', instances };
  }

  /** Asks every running worker for its health, metrics and memory now. */
  async report(): Promise<WorkerStatus[]> {
    const alive = this.alive();
    const reports = await Promise.all(alive.map((w) => this.request(w, { type: 'report' }) as Promise<WorkerReport>));
    return reports.map((r, i) => ({ ...r, worker: alive[i], pid: this.slots[alive[i]].pid }));
  }

  /** Every instance's counters added up over the workers that run it (see `combineMetrics`). */
  async metrics(): Promise<InstanceMetrics[]> {
    return combineMetrics((await this.report()).map((r) => r.metrics));
  }

  /** Every instance as GET /status and /metrics report it, added up over the workers that run it. */
  async observe(): Promise<ObservedInstance[]> {
    return combineObserved((await this.report()).map((r) => r.observed));
  }

  private measured(slot: Slot, url: string, report: BlackholeReport, histogram: string): void {
    let entry = this.measurements.get(url);
    if (!entry) {
      const timer = setTimeout(() => this.complete(url), MEASUREMENT_WAIT_MS);
      timer.unref();
      this.measurements.set(url, (entry = { parts: [], timer }));
    }
    entry.parts.push({ worker: slot.id, report, histogram });
    this.completeIfAll(url);
  }

  /** Complete once every running worker whose instances include `url` has sent its measurement. */
  private completeIfAll(url: string): void {
    const entry = this.measurements.get(url);
    if (!entry) return;
    const expected = this.slots.filter((s) => s.gone === undefined && s.health?.instances.some((i) => i.url === url)).map((s) => s.id);
    if (expected.every((w) => entry.parts.some((p) => p.worker === w))) this.complete(url);
  }

  /** Prints the combined report line (bench/run.ts reads the line with `workers`), then lets a deferred exit go. */
  private complete(url: string): void {
    const entry = this.measurements.get(url);
    if (!entry) return;
    this.measurements.delete(url);
    clearTimeout(entry.timer);
    process.stdout.write(JSON.stringify(combineMeasurements(entry.parts, process.memoryUsage.rss())) + '\n');
    if (this.deferredExit && this.measurements.size === 0) {
      const exit = this.deferredExit;
      this.deferredExit = undefined;
      this.exitRequests.next(exit);
    }
  }

  /**
   * An instance in a worker asked to exit: the whole server exits with its
   * code, at once, except while blackhole measurements are still to come
   * (each worker's blackhole ends its own window and asks): then once they
   * are all in, or after MEASUREMENT_WAIT_MS.
   */
  private exitAsked(slot: Slot, exit: ExitRequest): void {
    const reason = `worker ${slot.id}: ${exit.reason}`;
    if (this.measurements.size > 0) {
      this.deferredExit ??= { code: exit.code, reason };
      return;
    }
    this.exitRequests.next({ code: exit.code, reason });
  }

  /**
   * Drains every worker (each shuts its runtime down: sources stop, in-flight
   * events reach their sinks) and resolves once all have exited; one that
   * takes longer than DRAIN_TIMEOUT_MS is killed.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    for (const entry of this.measurements.values()) clearTimeout(entry.timer);
    for (const slot of this.slots) if (slot.next?.restart === true) clearTimeout(slot.next.timer);
    const exits = this.slots
      .filter((s) => s.worker.process.exitCode === null && s.worker.process.signalCode === null)
      .map(
        (s) =>
          new Promise<void>((resolve) => {
            const killer = setTimeout(() => s.worker.process.kill('SIGKILL'), DRAIN_TIMEOUT_MS);
            s.worker.process.once('exit', () => {
              clearTimeout(killer);
              resolve();
            });
            if (s.worker.isConnected()) s.worker.send({ type: 'shutdown' } satisfies ToWorker);
            else s.worker.process.kill('SIGTERM');
          }),
      );
    await Promise.all(exits);
    this.connections.close();
  }
}
