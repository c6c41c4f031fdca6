import { Subscription } from '../../core/rx';
import type { OfframpType } from '../connector';
import { s } from '../../schema/typed';

/** exit: an event `{exit: <status>, delay?: <ms>}` stops the runtime with that status. */
export const exit: OfframpType<Record<string, never>> = {
  name: 'exit',
  defaultCodec: 'json',
  placement: 'every-worker', // any worker's exit ends the server (docs/workers.md)
  autoAck: true,
  example: {},
  configSchema: s.object({}, { description: 'Shuts eddy down and exits the process with the status an event names.' }),
  stopsProcess: () => ({ field: 'type', what: 'the exit offramp stops the process on an event' }),
  create(_config, ctx) {
    // the delay runs on the runtime's scheduler, so a runtime in virtual time exits in virtual time
    const pending = new Subscription();
    return {
      send(_payloads, event) {
        const data = event.data as { exit?: unknown; delay?: unknown } | null;
        const code = data?.exit;
        const delay = data?.delay ?? 0;
        if (typeof code !== 'number' || !Number.isInteger(code)) throw new Error('exit: the event needs an integer field `exit`');
        if (typeof delay !== 'number' || delay < 0) throw new Error('exit: `delay` must be a number of milliseconds');
        pending.add(ctx.scheduler.schedule(() => ctx.requestExit(code, `exit offramp ${ctx.url}`), delay));
      },
      close() {
        pending.unsubscribe();
      },
    };
  },
};
