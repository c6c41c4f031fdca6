import type { EddyEvent } from './event';

/**
 * Where the live tap listens to a ramp's port. The machinery calls
 * `listener` with every event passing the port while it is set, and does
 * nothing else: with no tap client the hot path pays one undefined check.
 * Pipelines need no hook: their ports are Subjects a tap subscribes to.
 */
export class TapHook {
  listener: ((event: EddyEvent) => void) | undefined = undefined;
}
