import { map, type OperatorFunction } from '../../core/rx';
import type { EddyEvent } from '../../core/event';
import type { OperatorType } from '../operator';
import { showId } from './_shared/support';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    op: s.string({ description: 'label written into each history entry' }),
    name: s.string({ minLength: 1, description: 'meta key of the history array' }),
  },
  { description: 'Appends `evt: <op>(<id>)` to the meta array `name`, to trace the nodes an event went through.', required: ['op', 'name'] },
);

export type HistoryConfig = Input<typeof configSchema>;

/**
 * Appends `"evt: <op>(<uid:seq>)"` to the meta array `name`, so a test or a
 * debug sink can see which nodes an event went through.
 */
export function recordHistory(config: HistoryConfig): OperatorFunction<EddyEvent, EddyEvent> {
  return map((event) => {
    const previous = event.meta[config.name];
    const entries: unknown[] = Array.isArray(previous) ? previous : [];
    return { ...event, meta: { ...event.meta, [config.name]: [...entries, `evt: ${config.op}(${showId(event.id)})`] } };
  });
}

/** debug::history */
export const history: OperatorType<HistoryConfig> = {
  name: 'debug::history',
  examples: [{ op: 'seen', name: 'history' }],
  outputPorts: () => [],
  configSchema,
  create: (config) => recordHistory(config),
};
