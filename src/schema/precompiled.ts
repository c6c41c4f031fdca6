import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import type { JsonSchema } from './json-schema';

/**
 * Validators ajv generated ahead of time (`npm run build` runs
 * dist/tools/precompile.js after tsc), one module per schema, named by
 * a hash of the schema's JSON text. Compiling a schema with ajv costs
 * milliseconds to tens of milliseconds each and ajv itself is slow to load;
 * a generated module is only required.
 *
 * A schema whose text changed since the build (or an application's own
 * type, or a registry with other codec names) hashes to a name that has no
 * module, and is compiled at run time as before. Each module also holds the
 * schema text it was generated from, and is used only when that text is
 * exactly the schema's: so the precompiled code can only ever be used for
 * exactly the schema it was generated from, and the name needs no
 * cryptographic hash (node:crypto is ~5-10 ms of start-up to load).
 */
export const PRECOMPILED_DIR = join(__dirname, 'precompiled');

/**
 * The name a schema's generated module has: its JSON text hashed, two
 * 32-bit FNV-1a lanes with different multipliers (16 hex digits). A
 * collision costs only a compile at run time (see precompiledValidator).
 */
export function schemaKey(schema: JsonSchema): string {
  return textKey(JSON.stringify(schema));
}

function textKey(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
  return hex(a) + hex(b);
}

/** What a generated module exports: the validator, with the schema text it was generated from. */
export type GeneratedValidator = ValidateFunction & { schemaText?: string };

/** The line precompile appends to a generated module: the schema text it validates. */
export function schemaTextLine(schema: JsonSchema): string {
  return `\nmodule.exports.schemaText = ${JSON.stringify(JSON.stringify(schema))};\n`;
}

/** The generated validator for exactly this schema, if the build made one. */
export function precompiledValidator(schema: JsonSchema, dir = PRECOMPILED_DIR): ValidateFunction | undefined {
  const text = JSON.stringify(schema);
  const file = join(dir, `${textKey(text)}.js`);
  if (!existsSync(file)) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a generated file, found by path at run time
  const loaded = require(file) as GeneratedValidator;
  // the same name for another text (a hash collision) is not this schema's validator
  return loaded.schemaText === text ? loaded : undefined;
}
