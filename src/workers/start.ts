/** What `eddy server run --workers N` starts (src/cli/server-run.ts reads the flag). */
import { createLogger } from '../core/logger';
import type { RuntimeOptions } from '../runtime/runtime';
import type { ClusterRuntime } from './primary';

/** Forks the workers, then the primary's runtime that hands them its activations (loaded only then: one process never loads the cluster code). */
export async function startClusterRuntime(workers: number, options: Pick<RuntimeOptions, 'store' | 'policy'>): Promise<ClusterRuntime> {
  const [{ WorkerPool }, { ClusterRuntime }] = await Promise.all([import('./pool'), import('./primary')]);
  const logger = createLogger();
  logger.info(`starting ${workers} workers`);
  const pool = await WorkerPool.start(workers, logger);
  return new ClusterRuntime(pool, { ...options, logger });
}
