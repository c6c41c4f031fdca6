import type { Server } from 'node:http';
import type { Runtime } from '../runtime/runtime';
import { createApi, listen } from './server';

/** Where the REST API listens. */
export interface ApiOptions {
  /** the address to bind; 127.0.0.1 when absent */
  host?: string;
  /** the port; 9898 when absent, 0 for any free one */
  port?: number;
}

/**
 * Serves a runtime's REST API (the same API as `eddy server run`). Resolves
 * with the listening `node:http` server once it is bound; close it before
 * shutting the runtime down.
 */
export function serveApi(runtime: Runtime, options: ApiOptions = {}): Promise<Server> {
  return listen(createApi(runtime), options.host ?? '127.0.0.1', options.port ?? 9898);
}
