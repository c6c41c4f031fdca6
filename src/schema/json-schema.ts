/** A JSON schema object as ajv takes it. Kept loose on purpose: ajv checks it. */
export type JsonSchema = Record<string, unknown>;
