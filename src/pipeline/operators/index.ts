import type { OperatorType } from '../operator';
import { backpressure } from './backpressure';
import { batch } from './batch';
import { bucket } from './bucket';
import { cel } from './cel';
import { counter } from './counter';
import { history } from './history';
import { passthrough } from './passthrough';
import { percentile } from './percentile';
import { roundrobin } from './roundrobin';
import { wal } from './wal';

/** The builtin operators. Adding one is one file plus one line here. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const builtinOperators: readonly OperatorType<any>[] = [
  passthrough,
  batch,
  counter,
  history,
  bucket,
  backpressure,
  percentile,
  roundrobin,
  wal,
  cel,
];
