import type { OfframpType, OnrampType } from './connector';
import { loadAll } from '../core/registry';
import { offrampCatalog, onrampCatalog } from './catalog';

/** Every builtin connector, loaded (this module loads them all; a Runtime loads them by name from ./catalog). */
/* eslint-disable @typescript-eslint/no-explicit-any */
export const builtinOnramps: readonly OnrampType<any>[] = loadAll(onrampCatalog);
export const builtinOfframps: readonly OfframpType<any>[] = loadAll(offrampCatalog);
