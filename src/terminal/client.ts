/**
 * The few calls `eddy status` and `eddy top` make to a running eddy's REST
 * API, with errors that say which URL failed and why.
 */

import type { NodeStats } from '../pipeline/accounting';

export const KINDS = ['onramp', 'offramp', 'pipeline', 'binding'] as const;
export type ArtefactKind = (typeof KINDS)[number];

/** GET /status, as the observe branch defines it (fields may be added). */
export interface Status {
  version: string;
  uptime_s: number;
  /** a kind the server does not list (another version of eddy) is absent */
  artefacts: Partial<Record<ArtefactKind, string[]>>;
  instances: InstanceStatus[];
}

export interface InstanceStatus {
  kind: ArtefactKind;
  artefact: string;
  instance: string;
  url: string;
  state: string;
  reason?: string | null;
  breaker: 'open' | 'closed' | null;
  ports: PortStatus[];
  /** pipelines: per node, events in, out per linked port, dropped per reason */
  nodes?: NodeStats[];
  /** pipelines: events dropped at an interface output no binding links */
  dropped?: Record<string, number>;
  /** udp onramps on Linux: datagrams the kernel dropped before eddy read them (a full socket receive buffer) */
  kernel_drops?: number;
}

export interface PortStatus {
  port: string;
  direction: 'in' | 'out';
  /** cumulative since the instance started */
  events: number;
  errors: number;
}

export interface ClientOptions {
  /** the API's base URL, e.g. http://127.0.0.1:9898 */
  api: string;
  token?: string;
}

/** How status and top name an instance: its path in the API, `/kind/artefact/instance` (what its `url` says too). */
export function instancePath(instance: Pick<InstanceStatus, 'kind' | 'artefact' | 'instance'>): string {
  return `/${instance.kind}/${instance.artefact}/${instance.instance}`;
}

export class ApiUnreachable extends Error {}

export class ApiClient {
  readonly base: string;
  constructor(private readonly options: ClientOptions) {
    this.base = options.api.replace(/\/+$/, '');
  }

  async get(path: string): Promise<unknown> {
    const url = this.base + path;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
    } catch (err) {
      throw new ApiUnreachable(`cannot reach the eddy API at ${url}: ${reason(err)}`);
    }
    const text = await res.text();
    if (!res.ok) {
      let message = text;
      try {
        message = (JSON.parse(text) as { error?: string }).error ?? text;
      } catch {
        // not JSON: keep the text
      }
      const hint = res.status === 401 ? ' (pass the API token with --token or EDDY_API_TOKEN)' : '';
      throw new ApiUnreachable(`the eddy API at ${url} answered ${res.status}: ${message}${hint}`);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiUnreachable(`the eddy API at ${url} answered with something that is not JSON: ${text.slice(0, 80)}`);
    }
  }

  status(): Promise<Status> {
    return this.get('/status') as Promise<Status>;
  }
}

/** fetch's "fetch failed" hides the reason (ECONNREFUSED, ENOTFOUND, a timeout) in its cause. */
function reason(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'no answer within 5 s';
  if (e.cause?.code) return `${e.cause.code}${e.cause.message ? ` (${e.cause.message})` : ''}`;
  return e.cause?.message ?? e.message ?? String(err);
}
