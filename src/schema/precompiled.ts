import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import type { JsonSchema } from './json-schema';

/**
 * Validators ajv generated ahead of time (`npm run build` runs
 * dist/src/schema/precompile.js after tsc), one module per schema, named by
 * the hash of the schema's JSON text. Compiling a schema with ajv costs
 * milliseconds to tens of milliseconds each and ajv itself is slow to load;
 * a generated module is only required.
 *
 * A schema whose text changed since the build (or an application's own
 * type, or a registry with other codec names) hashes to a name that has no
 * module, and is compiled at run time as before: the precompiled code can
 * only ever be used for exactly the schema it was generated from.
 */
export const PRECOMPILED_DIR = join(__dirname, 'precompiled');

/** The name a schema's generated module has: its JSON text hashed. */
export function schemaKey(schema: JsonSchema): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex').slice(0, 32);
}

/** The generated validator for exactly this schema, if the build made one. */
export function precompiledValidator(schema: JsonSchema, dir = PRECOMPILED_DIR): ValidateFunction | undefined {
  const file = join(dir, `${schemaKey(schema)}.js`);
  if (!existsSync(file)) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require(file) as { default?: ValidateFunction } | ValidateFunction;
  return typeof loaded === 'function' ? loaded : loaded.default;
}
