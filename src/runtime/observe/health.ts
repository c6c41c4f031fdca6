import { maskUrlCredentials } from '../../core/redact';
import type { Live } from '../live';

export interface InstanceHealth {
  url: string;
  state: 'running' | 'paused' | 'down' | 'failed';
  reason?: string;
}

export interface Health {
  /** `ok` when every instance runs (paused by a circuit breaker counts as running) */
  status: 'ok' | 'unhealthy';
  instances: InstanceHealth[];
}

/**
 * Whether one instance runs: an onramp whose source failed, or an offramp
 * whose sink is down (disconnected, reconnecting), is not; an onramp paused
 * by its circuit breaker runs (it waits, as it should).
 */
export function instanceHealth(url: string, live: Live): InstanceHealth {
  if (live.kind === 'onramp') {
    const { failure, breaker } = live.onramp.runtime;
    if (failure !== undefined) return { url, state: 'failed', reason: maskUrlCredentials(failure) }; // a driver's message may carry its URL
    if (!breaker.isOpen) return { url, state: 'paused', reason: `circuit breaker held by ${breaker.holders().join(', ')}` };
  }
  if (live.kind === 'offramp' && live.offramp.down) return { url, state: 'down', reason: 'the sink is disconnected or full' };
  return { url, state: 'running' };
}

/** The health of a runtime's instances; never `ok` while it shuts down. */
export function health(instances: InstanceHealth[], shuttingDown: boolean): Health {
  const healthy = !shuttingDown && instances.every((i) => i.state === 'running' || i.state === 'paused');
  return { status: healthy ? 'ok' : 'unhealthy', instances };
}
