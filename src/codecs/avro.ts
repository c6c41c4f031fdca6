import * as avsc from 'avsc';
import type { CodecType } from './codec';
import { BoundedArrayType, BoundedMapType, checkedInt, DecimalType, exactLong } from './avro-types';
import { registrySchema } from './registry/client';
import { SchemaCodec, type SchemaCodecConfig } from './registry/schema-codec';
import { s } from '../schema/typed';

const configSchema = s.object(
  {
    // text or an object: no builder takes a list of types, so the one field is written out
    schema: { type: ['string', 'object'], description: 'the Avro schema (.avsc JSON), as text or as an object' },
    schema_file: s.string({ path: 'read', minLength: 1, description: 'a .avsc file holding the schema' }),
    registry: registrySchema,
  },
  {
    description: 'Avro binary: one datum per frame, with a schema given inline, in a file, or from a schema registry.',
    anyOf: [{ required: ['schema'] }, { required: ['schema_file'] }, { required: ['registry'] }],
  },
);

/** A compiled writer schema, and how to read it into the config's own schema when that differs. */
interface AvroSchema {
  type: avsc.Type;
  /** a writer's schema other than the config's: the config's type reads what it wrote, through the resolver */
  resolved?: { reader: avsc.Type; resolver: avsc.Resolver };
}

/**
 * Avro binary encoding, one datum per frame (see docs/codecs/avro.md for the
 * value mapping). Without a registry a frame is the bare datum; with one it
 * is in the Confluent wire format, and a schema of the config is the reader
 * schema that each writer's schema is resolved to (Avro schema resolution).
 */
class AvroCodec extends SchemaCodec<AvroSchema> {
  constructor(config: SchemaCodecConfig) {
    super('avro', 'AVRO', config);
  }

  protected compile(text: string, where: string): AvroSchema {
    let schema: unknown;
    try {
      schema = JSON.parse(text);
    } catch {
      // a bare primitive name ("long") is a schema too
      schema = text.trim();
    }
    const named: Record<string, avsc.Type> = { long: exactLong };
    let type: avsc.Type;
    try {
      type = avsc.Type.forSchema(schema as avsc.Schema, {
        registry: named,
        logicalTypes: { decimal: DecimalType },
        typeHook: (s, opts) => {
          // the schema as parsed from the text: JSON's null too, whatever avsc's type says
          const parsed: unknown = s;
          const kind = typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : parsed;
          // `long` and `{"type": "long", ...}` (timestamp-millis, say) alike
          if (kind === 'long') return exactLong;
          if (kind === 'int') return checkedInt;
          if (kind === 'array') return new BoundedArrayType(s, opts);
          if (kind === 'map') return new BoundedMapType(s, opts);
          return undefined;
        },
        wrapUnions: 'auto',
        omitRecordMethods: true,
      });
    } catch (err) {
      throw new Error(`avro: the schema of ${where} is invalid: ${(err as Error).message}`);
    }
    // records decode as plain objects, as every other codec's maps do (avsc builds them with a constructor of its own)
    for (const t of Object.values(named)) {
      // avsc makes both records and errors RecordTypes
      if (t instanceof avsc.types.RecordType) (t.recordConstructor as { prototype: object }).prototype = Object.prototype;
    }
    if (type instanceof avsc.types.RecordType && type.typeName === 'record') (type.recordConstructor as { prototype: object }).prototype = Object.prototype;
    const local = this.local;
    if (local === undefined || local.type.equals(type)) return { type };
    try {
      return { type, resolved: { reader: local.type, resolver: local.type.createResolver(type) } };
    } catch (err) {
      throw new Error(`avro: the schema of ${where} cannot be read as the config's schema: ${(err as Error).message}`);
    }
  }

  protected read(writer: AvroSchema, frame: Buffer, offset: number): unknown {
    const body = offset === 0 ? frame : frame.subarray(offset);
    try {
      if (writer.resolved === undefined) return writer.type.fromBuffer(body);
      // avsc's resolving readers loop over array blocks unbounded: the bounded read of the writer's schema checks the frame first
      writer.type.fromBuffer(body);
      return writer.resolved.reader.fromBuffer(body, writer.resolved.resolver);
    } catch (err) {
      throw new Error(`avro: cannot decode: ${(err as Error).message}`);
    }
  }

  protected write(schema: AvroSchema, value: unknown): Buffer {
    try {
      // avsc checks each value as it writes it: the path is looked up only for a value it refused
      return schema.type.toBuffer(value);
    } catch {
      const errors: string[] = [];
      const errorHook = (path: string[], v: unknown, type: avsc.Type) => {
        // a decimal's own reason (too many digits) says more than "does not match"
        const why = type instanceof DecimalType ? type.reason(v) : `${describe(v)} does not match the schema`;
        errors.push(`${path.join('.') || '(top level)'}: ${why}`);
      };
      schema.type.isValid(value, { errorHook });
      throw new Error(`avro: cannot encode: ${errors.length > 0 ? errors.slice(0, 3).join('; ') : 'the value does not match the schema'}`);
    }
  }

  protected prefix(): Buffer {
    return Buffer.alloc(0);
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'a missing value';
  if (typeof value === 'bigint') return `${value}n`;
  if (Buffer.isBuffer(value)) return `${value.length} bytes`;
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}

export const avro: CodecType = {
  name: 'avro',
  summary: 'One Avro binary datum per frame; schema inline, from a file or from a schema registry (Confluent wire format). Needs config.',
  configSchema,
  create: (config) => {
    if (config === undefined) throw new Error('avro: needs config (codec: {name: avro, config: {schema | schema_file | registry}})');
    return new AvroCodec(config);
  },
};
