/**
 * The messages between the primary and its workers (node:cluster IPC with
 * the `advanced` serialisation, so bigint timestamps pass as they are).
 */
import type { Artefact } from '../runtime/artefacts';
import type { Health } from '../runtime/runtime';
import type { ErrorCode } from '../core/errors';
import type { Kind } from '../runtime/urls';
import type { BlackholeReport } from '../connectors/blackhole/offramp';
import type { InstanceMetrics } from './metrics';
import type { ObservedInstance } from '../runtime/observe/observe';

/** One activation or deactivation as the primary's runtime accepted it. */
export interface InstanceRequest {
  kind: Kind;
  artefact: string;
  instance: string;
  params: Record<string, string>;
}

export type ToWorker =
  /** `artefacts`: every artefact the activation uses, as the primary's repository holds them */
  | { type: 'activate'; id: number; request: InstanceRequest; artefacts: { kind: Kind; artefact: Artefact }[] }
  | { type: 'deactivate'; id: number; request: InstanceRequest }
  | { type: 'report'; id: number }
  /** drain and exit 0 */
  | { type: 'shutdown' }
  /** the answer to the worker's `listen` (its `request`): the port the primary listens on for it, or why not */
  | { type: 'listened'; request: number; ok: true; port: number }
  | { type: 'listened'; request: number; ok: false; error: string }
  /** a connection the primary accepted for `listener` (an onramp instance url), passed with the message as its socket */
  | { type: 'connection'; listener: string };

export interface WorkerReport {
  health: Health;
  metrics: InstanceMetrics[];
  /** what GET /status and /metrics report of the worker's instances */
  observed: ObservedInstance[];
  rssBytes: number;
}

export type FromWorker =
  | { type: 'ready' }
  /** `health`: the worker's health after the change, so the primary's GET /health shows it once the change is answered */
  | { type: 'reply'; id: number; ok: true; value?: unknown; health: Health }
  | { type: 'reply'; id: number; ok: false; error: { code: ErrorCode; message: string }; health: Health }
  /** sent on an interval and after each change, so the primary's health answers at once */
  | { type: 'health'; health: Health }
  /** a blackhole finished its measurement: `histogram` is hdr-histogram-js's compressed base64 */
  | { type: 'measurement'; url: string; report: BlackholeReport; histogram: string }
  /** an instance asked the process to exit (exit offramp, blackhole, file close_on_done, a store failure) */
  | { type: 'exit'; code: number; reason: string }
  /** an onramp instance (`listener`, its url) binds a connection listener: the primary listens and answers `listened` */
  | { type: 'listen'; request: number; listener: string; host: string; port: number }
  /** the onramp instance closed its listener: no more connections for it here */
  | { type: 'unlisten'; listener: string }
  /** a connection the primary handed over for `listener` closed: one fewer open here */
  | { type: 'connection-closed'; listener: string };

/** The id a worker knows itself by (0..N-1), set by the primary in the worker's environment. */
export const WORKER_ID_ENV = 'EDDY_WORKER_ID';
