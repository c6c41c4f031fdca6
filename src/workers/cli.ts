/** What `eddy server run --workers` needs (src/cli.ts stays small). */
import { availableParallelism } from 'node:os';
import { createLogger } from '../core/logger';
import type { RuntimeOptions } from '../runtime/runtime';
import type { ClusterRuntime } from './primary';

/** `--workers N` (a whole number ≥ 1) or `auto` (one per core: os.availableParallelism()). */
export function parseWorkers(value: string): number {
  if (value === 'auto') return availableParallelism();
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new Error(`--workers: '${value}' is not a number of workers (a whole number >= 1, or auto)`);
  return n;
}

/** Forks the workers, then the primary's runtime that hands them its activations (loaded only then: one process never loads the cluster code). */
export async function startClusterRuntime(workers: number, options: Pick<RuntimeOptions, 'store' | 'policy'>): Promise<ClusterRuntime> {
  const [{ WorkerPool }, { ClusterRuntime }] = await Promise.all([import('./pool'), import('./primary')]);
  const logger = createLogger();
  logger.info(`starting ${workers} workers`);
  const pool = await WorkerPool.start(workers, logger);
  return new ClusterRuntime(pool, { ...options, logger });
}
