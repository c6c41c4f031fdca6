import { maskUrlCredentials } from '../../core/redact';
import type { Runtime } from '../runtime';

/** GET /health/live: whether the process should be left running (`ok`) or restarted. */
export interface Liveness {
  status: 'ok' | 'unhealthy';
  /** why it should be restarted; absent when `ok` */
  reason?: string;
}

/**
 * Liveness, as opposed to readiness (`Runtime.health()`, GET /health/ready):
 * an offramp whose sink is down makes eddy not ready, but restarting the
 * process would not bring the sink back, it would only lose what waits in
 * memory; so liveness stays `ok` through that. It is `unhealthy` only when
 * the process cannot go on by itself:
 *
 * - the runtime asked to exit (an exit offramp, a failed store write, a
 *   worker's blackhole), or it is shutting down;
 * - with `--workers N > 1`, a worker was given up (it died too many times
 *   in a row, docs/workers.md), so only a restart of the server brings its
 *   instances back; a worker being restarted is `down`, which readiness
 *   reports and liveness lets run.
 *
 * That the event loop answers at all is the rest of the check: a process
 * stuck in a loop does not answer, and the probe times out.
 */
export class LivenessCheck {
  private exit?: { code: number; reason: string };

  constructor(private readonly runtime: Runtime) {
    // the first request only: it is the one the process acts on
    runtime.exitRequests.subscribe((request) => (this.exit ??= request));
  }

  check(): Liveness {
    if (this.exit) return { status: 'unhealthy', reason: `the runtime asked to exit (status ${this.exit.code}): ${maskUrlCredentials(this.exit.reason)}` };
    const health = this.runtime.health();
    const gone = health.instances.filter((i) => i.url.startsWith('/worker/') && i.state === 'failed');
    if (gone.length > 0) return { status: 'unhealthy', reason: gone.map((g) => g.reason ?? `${g.url} is gone`).join('; ') };
    if (this.runtime.shuttingDown) return { status: 'unhealthy', reason: 'the runtime is shutting down' };
    return { status: 'ok' };
  }
}
