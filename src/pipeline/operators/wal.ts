import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invalid } from '../../core/errors';
import { checkInstalled } from '../../core/packages';
import type { OperatorType } from '../operator';
import { LevelWalStorage } from './wal-storage';
import { walNode } from './wal-log';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';
import { durationMs, durationSchema } from '../../schema/duration';
import { CheckpointingLog } from './wal-checkpoint';

const configSchema = s.object(
  {
    read_count: s.integer({ minimum: 1, description: 'stored events emitted per turn before yielding' }),
    dir: s.string({ minLength: 1, description: 'directory of the log; temporary when absent' }),
    max_elements: s.integer({ minimum: 1, description: 'full (breaker triggered) at this many unacknowledged events' }),
    max_bytes: s.integer({ minimum: 1, description: 'full (breaker triggered) at this many bytes of unacknowledged events' }),
    flush_on_event: s.boolean({ default: false, description: 'fsync every write' }),
    guarantee: s.literals(['at_least_once', 'exactly_once'], {
      description:
        'at_least_once (default): an event leaves the log once downstream acked it; exactly_once: the log checkpoints what follows it (the state of the stateful nodes after it, the length of the files its flow writes) each commit_interval, and after a crash goes on from the last checkpoint (docs/design-exactly-once.md)',
    }),
    commit_interval: durationSchema('guarantee exactly_once: how often a checkpoint is written (default 100ms)'),
  },
  {
    description: 'A write-ahead log: stores each event before acknowledging it upstream and replays what is not acknowledged downstream.',
    required: ['read_count'],
    // at least one bound: a log without one would grow without end
    anyOf: [{ required: ['max_elements'] }, { required: ['max_bytes'] }],
  },
);

export type WalConfig = Input<typeof configSchema>;
export { walNode, type WalNode } from './wal-log';

/** guarantee exactly_once: a checkpoint per this long unless commit_interval says otherwise */
const DEFAULT_COMMIT_INTERVAL = '100ms';

const sanitise = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '');

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

/** qos::wal */
export const wal: OperatorType<WalConfig> = {
  name: 'qos::wal',
  outputPorts: () => ['err'],
  configSchema,
  checkpoints: (config) => config.guarantee === 'exactly_once',
  validate(config, nodeId) {
    checkWalConfig(config, nodeId);
    // the log is a LevelDB store, opened at activation
    checkInstalled('level', `qos::wal node ${nodeId}`);
  },
  create(config, ctx) {
    const base = config.dir ?? (ctx.dataDir !== undefined ? join(ctx.dataDir, 'wal') : undefined);
    if (config.guarantee === 'exactly_once' && base === undefined) {
      throw invalid(`qos::wal node ${ctx.nodeId}: guarantee exactly_once keeps its log and checkpoints on disk: give it a dir, or run the server with --data-dir`);
    }
    // one log per pipeline instance and node, so two instances never share a LevelDB lock
    const dir = base !== undefined ? join(base, sanitise(ctx.pipelineUrl), sanitise(ctx.nodeId)) : mkdtempSync(join(tmpdir(), 'eddy-wal-'));
    const storage = new LevelWalStorage(dir, config.flush_on_event ?? false);
    if (config.guarantee === 'exactly_once') return new CheckpointingLog(config, ctx, storage, durationMs(config.commit_interval ?? DEFAULT_COMMIT_INTERVAL, 'commit_interval'));
    return walNode(config, ctx, storage);
  },
};
