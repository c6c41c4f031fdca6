import type { CodecType } from './codec';
import { loadAll } from '../core/registry';
import { codecCatalog } from './catalog';

export { builtinMimeMap, codecForMime, mimeEssence } from './mime';

/** Every builtin codec, loaded (a Runtime loads them by name from ./catalog). */
export const builtinCodecs: readonly CodecType[] = loadAll(codecCatalog);
