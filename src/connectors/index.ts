import type { AnyOfframpType, AnyOnrampType } from './connector';
import { loadAll } from '../core/registry';
import { offrampCatalog, onrampCatalog } from './catalog';

/** Every builtin connector, loaded (this module loads them all; a Runtime loads them by name from ./catalog). */
export const builtinOnramps: readonly AnyOnrampType[] = loadAll(onrampCatalog);
export const builtinOfframps: readonly AnyOfframpType[] = loadAll(offrampCatalog);
