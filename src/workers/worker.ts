/**
 * A worker process of `eddy server run --workers N` (docs/workers.md): a
 * Runtime of its own, without API, store or config files. It runs what the
 * primary tells it to activate, with the artefacts the primary sends along,
 * and reports health, metrics, measurements and exit requests back.
 */
import { EddyError } from '../core/errors';
import { childLogger, createLogger } from '../core/logger';
import { maskUrlCredentials } from '../core/redact';
import { Runtime } from '../runtime/runtime';
import type { Artefact } from '../runtime/artefacts';
import type { Kind } from '../runtime/urls';
import { instanceMetrics } from './metrics';
import { encodeHistogram } from './measurements';
import type { BlackholeReport } from '../connectors/blackhole/offramp';
import { WORKER_ID_ENV, type FromWorker, type ToWorker } from './protocol';
import { WorkerListeners } from './listeners';
import type { Socket } from 'node:net';

/** How often a worker tells the primary its health unasked (after every change it tells at once). */
const HEALTH_INTERVAL_MS = 1000;

function send(message: FromWorker): void {
  // the channel may be closing (the primary died): what is lost then has no one to read it
  if (process.connected) process.send?.(message);
}

/** Puts the primary's version of an artefact in this worker's repository (the primary checked it and its paths already). */
function adopt(runtime: Runtime, kind: Kind, artefact: Artefact): void {
  const repository = runtime.repository;
  if (repository.has(kind, artefact.id)) {
    if (repository.isSystem(kind, artefact.id)) return;
    if (JSON.stringify(repository.get(kind, artefact.id)) === JSON.stringify(artefact)) return;
    // published again in the primary with other content since this worker last ran it
    repository.remove(kind, artefact.id);
  }
  repository.publish(kind, artefact);
}

async function answer(message: Extract<ToWorker, { id: number }>, runtime: Runtime): Promise<unknown> {
  if (message.type === 'activate') {
    for (const { kind, artefact } of message.artefacts) adopt(runtime, kind, artefact);
    const { kind, artefact, instance, params } = message.request;
    await runtime.activate(kind, artefact, instance, params);
    return undefined;
  }
  if (message.type === 'deactivate') {
    const { kind, artefact, instance } = message.request;
    await runtime.deactivate(kind, artefact, instance);
    return undefined;
  }
  return { health: runtime.health(), metrics: instanceMetrics(runtime), observed: runtime.observe(), rssBytes: process.memoryUsage.rss() };
}

export async function workerMain(): Promise<void> {
  const id = Number(process.env[WORKER_ID_ENV]);
  const logger = childLogger(createLogger(), { worker: id });
  // the primary listens for the tcp onramps and hands each worker its share of the connections (balancer.ts)
  const listeners = new WorkerListeners(send);
  // the primary prints one combined report of every worker's blackhole (the only type that measures)
  const runtime = new Runtime({
    logger,
    sharedListeners: listeners,
    onMeasurement: (url, report, histogram) => send({ type: 'measurement', url, report: report as BlackholeReport, histogram: encodeHistogram(histogram) }),
  });
  await runtime.start();
  let stopping = false;
  const timer = setInterval(() => send({ type: 'health', health: runtime.health() }), HEALTH_INTERVAL_MS);
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(timer);
    await runtime.shutdown();
    process.exit(0);
  };
  runtime.exitRequests.subscribe(({ code, reason }) => send({ type: 'exit', code, reason }));
  process.on('message', (message: ToWorker, handle?: Socket) => {
    if (message.type === 'shutdown') {
      void stop();
      return;
    }
    if (message.type === 'listened') return listeners.listened(message);
    if (message.type === 'connection') return listeners.accepted(message.listener, handle);
    answer(message, runtime).then(
      (value) => send({ type: 'reply', id: message.id, ok: true, value, health: runtime.health() }),
      (err: unknown) => {
        const code = err instanceof EddyError ? err.code : 'internal';
        send({ type: 'reply', id: message.id, ok: false, error: { code, message: (err as Error).message }, health: runtime.health() });
      },
    );
  });
  // the primary is gone (killed): drain and leave, never stay behind as an orphan
  process.on('disconnect', () => void stop());
  // Ctrl-C reaches the whole process group: the primary drains the workers, one by one it would not
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => void stop());
  send({ type: 'ready' });
}

if (require.main === module) {
  workerMain().catch((err: unknown) => {
    process.stderr.write(`error: worker ${process.env[WORKER_ID_ENV]}: ${maskUrlCredentials((err as Error).message)}\n`);
    process.exit(1);
  });
}
