import { identity } from '../../core/rx';
import type { OperatorType } from '../operator';

/** passthrough: forwards every event unchanged on `out`. */
export const passthrough: OperatorType = {
  name: 'passthrough',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    description: 'Forwards every event unchanged on `out`.',
    properties: {},
  },
  forwardsUnchanged: true,
  create: () => identity,
};
