import type { OperatorType } from '../operator';
import { loadAll } from '../../core/registry';
import { operatorCatalog } from './catalog';

/** Every builtin operator, loaded (a Runtime loads them by name from ./catalog). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the list holds types whose config types all differ; any lets each keep its own C
export const builtinOperators: readonly OperatorType<any>[] = loadAll(operatorCatalog);
