/**
 * eddy's own schema keywords: annotations on a config schema that eddy's
 * code and tools read, and validation ignores (its ajv runs with
 * `strict: false`). They appear in every schema eddy publishes (`eddy
 * schema`, GET /types, the OpenAPI document); a strict JSON Schema tool
 * takes them once told their names:
 *
 * - `path`: the field names a file or folder, and how eddy uses it (schema/paths.ts);
 * - `unit`: the unit of a duration field's bare number (schema/duration.ts);
 * - `secretKeys`, `secretKeysFrom`: the keys of a map whose values are secrets (schema/secrets.ts).
 */
export const EDDY_KEYWORDS = ['path', 'unit', 'secretKeys', 'secretKeysFrom'] as const;
