import type { Server } from 'node:http';
import type { Runtime } from '../runtime/runtime';
import type { ApiOptions } from './options';
import { createApi, listen } from './server';

/** Where the REST API listens, and the limits and access rules of `eddy server run`'s API flags. */
export interface ServeOptions extends ApiOptions {
  /** the address to bind; 127.0.0.1 when absent */
  host?: string;
  /** the port; 9898 when absent, 0 for any free one */
  port?: number;
}

/**
 * Serves a runtime's REST API (the same API as `eddy server run`, with the
 * same defaults: input limits, Origin/Host checks, a bearer token when
 * `token` is set). Resolves with the listening `node:http` server once it is
 * bound; close it before shutting the runtime down.
 */
export function serveApi(runtime: Runtime, options: ServeOptions = {}): Promise<Server> {
  const host = options.host ?? '127.0.0.1';
  return listen(createApi(runtime, { ...options, host }), host, options.port ?? 9898);
}
