/**
 * Reading a config schema as a person would: its fields as rows (dotted
 * paths, type, default, required, description) and a type in words. The
 * references (tools/docs/) render their tables from these; `eddy new`
 * comments its skeletons with them.
 */
import type { JsonSchema } from './json-schema';
import { durationUnit, type DurationUnit } from './duration';

export interface ConfigRow {
  /** dotted path: `endpoint.host`, `entries[].name` */
  field: string;
  type: string;
  default?: string;
  required: boolean;
  description: string;
  /** a duration field: what its bare number counts (docs/config-files.md#durations) */
  unit?: DurationUnit;
}

/**
 * One row per property, nested ones under their parent's path: an object's
 * fields as `parent.field`, the fields of a list's objects as
 * `parent[].field`, and the fields of an object alternative (`oneOf`) as
 * `parent.field` too.
 */
export function configRows(schema: JsonSchema, prefix = ''): ConfigRow[] {
  const rows: ConfigRow[] = [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const [key, property] of Object.entries(properties)) {
    const field = `${prefix}${key}`;
    rows.push({
      field,
      type: typeText(property),
      default: property.default === undefined ? undefined : JSON.stringify(property.default),
      required: required.has(key),
      description: typeof property.description === 'string' ? property.description : '',
      ...(durationUnit(property) === undefined ? {} : { unit: durationUnit(property) }),
    });
    rows.push(...nestedRows(property, field));
  }
  return rows;
}

function nestedRows(schema: JsonSchema, field: string): ConfigRow[] {
  if (schema.properties) return configRows(schema, `${field}.`);
  const items = schema.items as JsonSchema | undefined;
  if (items && typeof items === 'object' && items.properties) return configRows(items, `${field}[].`);
  const branches = ((schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined) ?? [];
  return branches.flatMap((branch) => nestedRows(branch, field));
}

/** A readable type: `integer (≥ 1)`, `list of string`, `map of string to string`, `string or object`, `one of "a", "b"`. */
export function typeText(schema: JsonSchema): string {
  const unit = durationUnit(schema);
  if (unit !== undefined) return `duration (a bare number: ${unit})`;
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const branches = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(branches)) return [...new Set(branches.map(typeText))].join(' or ');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  if (types.length === 0) return 'any';
  return types.map((t) => singleType(t, schema)).join(' or ');
}

function singleType(type: string, schema: JsonSchema): string {
  switch (type) {
    case 'array': {
      const items = schema.items as JsonSchema | undefined;
      return items && typeof items === 'object' ? `list of ${typeText(items)}` : 'list';
    }
    case 'object': {
      const values = schema.additionalProperties;
      if (!schema.properties && values && typeof values === 'object') return `map of string to ${typeText(values as JsonSchema)}`;
      return 'object';
    }
    case 'integer':
    case 'number':
      return `${type}${bounds(schema)}`;
    default:
      return type;
  }
}

function bounds(schema: JsonSchema): string {
  const parts: string[] = [];
  if (typeof schema.minimum === 'number') parts.push(`≥ ${schema.minimum}`);
  if (typeof schema.exclusiveMinimum === 'number') parts.push(`> ${schema.exclusiveMinimum}`);
  if (typeof schema.maximum === 'number') parts.push(`≤ ${schema.maximum}`);
  if (typeof schema.exclusiveMaximum === 'number') parts.push(`< ${schema.exclusiveMaximum}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}
