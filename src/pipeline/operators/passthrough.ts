import { identity } from '../../core/rx';
import type { OperatorType } from '../operator';
import { s } from '../../schema/typed';

/** passthrough: forwards every event unchanged on `out`. */
export const passthrough: OperatorType = {
  name: 'passthrough',
  examples: [{}],
  outputPorts: () => [],
  configSchema: s.object({}, { description: 'Forwards every event unchanged on `out`.' }),
  forwardsUnchanged: true,
  create: () => identity,
};
