/**
 * Build step (`npm run build`, after tsc): writes ajv standalone validation
 * code for every builtin schema into dist/src/schema/precompiled/, one
 * module per schema named by its hash (see src/schema/precompiled.ts). The output is
 * generated, never committed: it is derived from the schemas in the
 * sources, and the hash naming makes a stale or missing module harmless
 * (the schema is then compiled at run time, as it always was).
 *
 * `node dist/tools/precompile.js [DIR]` writes to DIR instead.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import { PLACEHOLDERS_SCHEMA } from '../src/api/routes';
import { loadAll } from '../src/core/registry';
import { offrampCatalog, onrampCatalog } from '../src/connectors/catalog';
import { operatorCatalog } from '../src/pipeline/operators/catalog';
import { postprocessorCatalog, preprocessorCatalog } from '../src/processors/catalog';
import { Registries } from '../src/runtime/registries';
import { AJV_OPTIONS, artefactSchemas } from '../src/schema/artefacts';
import type { JsonSchema } from '../src/schema/json-schema';
import { PRECOMPILED_DIR, schemaKey, schemaTextLine } from '../src/schema/precompiled';

/** Every schema a runtime with only the builtin types validates against. */
export function builtinSchemas(): JsonSchema[] {
  const registries = Registries.withBuiltins();
  // the same names, in the same order, the repository passes (registry names are sorted)
  const artefacts = artefactSchemas({
    codecs: registries.codecs.names(),
    preprocessors: registries.preprocessors.names(),
    postprocessors: registries.postprocessors.names(),
  });
  const types = [onrampCatalog, offrampCatalog, preprocessorCatalog, postprocessorCatalog, operatorCatalog].flatMap((catalog) =>
    loadAll<{ configSchema?: JsonSchema }>(catalog),
  );
  const schemas = [...Object.values(artefacts), ...types.flatMap((t) => (t.configSchema ? [t.configSchema] : [])), PLACEHOLDERS_SCHEMA]; // the API's placeholder body schema
  return schemas;
}

/** Writes one module per distinct schema into `dir` (emptied first); returns how many. */
export function precompile(schemas: readonly JsonSchema[], dir: string): number {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const written = new Set<string>();
  for (const schema of schemas) {
    const key = schemaKey(schema);
    // the same schema twice, or (rarely) another one with the same name: that one is compiled at run time
    if (written.has(key)) continue;
    // a fresh ajv per schema: each module holds exactly one schema's code; structuredClone
    // because ajv may annotate the object it compiles, and the key is of the schema as written
    const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
    const validate = ajv.compile(structuredClone(schema));
    writeFileSync(join(dir, `${key}.js`), standaloneCode(ajv, validate) + schemaTextLine(schema));
    written.add(key);
  }
  return readdirSync(dir).length;
}

if (require.main === module) {
  const dir = process.argv[2] ?? PRECOMPILED_DIR;
  const count = precompile(builtinSchemas(), dir);
  process.stderr.write(`precompiled ${count} schema validators into ${dir}\n`);
}
