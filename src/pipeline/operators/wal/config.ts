/** qos::wal's config: its schema and what the schema cannot say, for the node kinds (log.ts, checkpoint.ts) and the type (../wal.ts). */
import { invalid } from '../../../core/errors';
import { s } from '../../../schema/typed';
import type { Input } from '../../../schema/typed';
import { durationMs, duration } from '../../../schema/duration';

export const configSchema = s.object(
  {
    read_count: s.integer({ minimum: 1, description: 'stored events emitted per turn before yielding' }),
    dir: s.string({ path: 'tree', minLength: 1, description: 'directory of the log; temporary when absent' }),
    max_elements: s.integer({ minimum: 1, description: 'full (breaker triggered) at this many unacknowledged events' }),
    max_bytes: s.integer({ minimum: 1, description: 'full (breaker triggered) at this many bytes of unacknowledged events' }),
    flush_on_event: s.boolean({ default: false, description: 'fsync every write' }),
    guarantee: s.literals(['at_least_once', 'exactly_once'], {
      description:
        'at_least_once (default): an event leaves the log once downstream acked it; exactly_once: the log checkpoints what follows it (the state of the stateful nodes after it, the length of the files its flow writes) each commit_interval, and after a crash goes on from the last checkpoint (docs/design-exactly-once.md)',
    }),
    commit_interval: duration('guarantee exactly_once: how often a checkpoint is written (default 100ms)'),
  },
  {
    description: 'A write-ahead log: stores each event before acknowledging it upstream and replays what is not acknowledged downstream.',
    required: ['read_count'],
    // at least one bound: a log without one would grow without end
    anyOf: [{ required: ['max_elements'] }, { required: ['max_bytes'] }],
  },
);

export type WalConfig = Input<typeof configSchema>;

/** guarantee exactly_once: a checkpoint per this long unless commit_interval says otherwise */
export const DEFAULT_COMMIT_INTERVAL = '100ms';

/** What the schema cannot say: a bound is required. (`eddy test` keeps the log in memory: this check alone, no LevelDB.) */
export function checkWalConfig(config: WalConfig, nodeId: string): void {
  if (config.max_elements === undefined && config.max_bytes === undefined) {
    throw invalid(`qos::wal node ${nodeId}: config: one of max_elements and max_bytes is required`);
  }
  if (config.guarantee === 'exactly_once') durationMs(config.commit_interval ?? DEFAULT_COMMIT_INTERVAL, `qos::wal node ${nodeId}: config: commit_interval`);
  else if (config.commit_interval !== undefined) {
    throw invalid(`qos::wal node ${nodeId}: config: commit_interval is only for guarantee exactly_once (at least once removes each event once acked)`);
  }
}
