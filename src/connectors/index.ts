import type { OfframpType, OnrampType } from './connector';
import { loadAll } from '../core/registry';
import { offrampCatalog, onrampCatalog } from './catalog';

/** Every builtin connector, loaded (this module loads them all; a Runtime loads them by name from ./catalog). */
/* eslint-disable @typescript-eslint/no-explicit-any -- the lists hold types whose config types all differ; any lets each keep its own C */
export const builtinOnramps: readonly OnrampType<any>[] = loadAll(onrampCatalog);
export const builtinOfframps: readonly OfframpType<any>[] = loadAll(offrampCatalog);
/* eslint-enable @typescript-eslint/no-explicit-any -- the lists end here */
