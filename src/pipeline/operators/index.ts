import type { AnyOperatorType } from '../operator';
import { loadAll } from '../../core/registry';
import { operatorCatalog } from './catalog';

/** Every builtin operator, loaded (a Runtime loads them by name from ./catalog). */
export const builtinOperators: readonly AnyOperatorType[] = loadAll(operatorCatalog);
