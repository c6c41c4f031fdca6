import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invalid } from '../../core/errors';
import { checkInstalled } from '../../core/packages';
import type { OperatorType } from '../operator';
import { LevelWalStorage } from './wal/storage';
import { walNode } from './wal/log';
import { durationMs } from '../../schema/duration';
import { DEFAULT_COMMIT_INTERVAL, checkWalConfig, configSchema, type WalConfig } from './wal/config';
import { CheckpointingLog } from './wal/checkpoint';

export type { WalConfig };
export { checkWalConfig };
export { walNode, type WalNode } from './wal/log';

const sanitise = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '');

/** qos::wal */
export const wal: OperatorType<WalConfig> = {
  name: 'qos::wal',
  examples: [{ read_count: 10, max_elements: 1000 }],
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
      throw invalid(
        `qos::wal node ${ctx.nodeId}: guarantee exactly_once keeps its log and checkpoints on disk: give it a dir, or run the server with --data-dir`,
      );
    }
    // one log per pipeline instance and node, so two instances never share a LevelDB lock
    const dir = base !== undefined ? join(base, sanitise(ctx.pipelineUrl), sanitise(ctx.nodeId)) : mkdtempSync(join(tmpdir(), 'eddy-wal-'));
    const storage = new LevelWalStorage(dir, config.flush_on_event ?? false);
    if (config.guarantee === 'exactly_once')
      return new CheckpointingLog(config, ctx, storage, durationMs(config.commit_interval ?? DEFAULT_COMMIT_INTERVAL, 'commit_interval'));
    return walNode(config, ctx, storage);
  },
};
