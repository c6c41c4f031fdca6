import type { OperatorType } from '../operator';
import { passthrough } from './passthrough';

/** The builtin operators. Adding one is one file plus one line here. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const builtinOperators: readonly OperatorType<any>[] = [passthrough];
