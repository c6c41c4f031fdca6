import type { Insight } from '../core/event';

/** Anything contraflow can travel back to: a pipeline instance or an onramp instance. */
export interface ContraflowTarget {
  readonly url: string;
  contraflow(insight: Insight): void;
}
