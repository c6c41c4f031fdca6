import { readFileSync } from 'node:fs';
import type { Codec } from '../codec';
import { SchemaRegistry, subjectOf, type RegisteredSchema, type RegistryConfig, type SchemaType } from './client';
import { header, HEADER_LENGTH, schemaIdOf } from './wire';

/** What the avro and protobuf codecs' configs share. */
export interface SchemaCodecConfig {
  schema?: unknown;
  schema_file?: string;
  registry?: RegistryConfig;
}

/** The schema text of the config: `schema` inline (a JSON object is written out as text), or the file `schema_file`. */
export function localSchemaText(codec: string, config: SchemaCodecConfig): string | undefined {
  if (config.schema !== undefined && config.schema_file !== undefined) throw new Error(`${codec}: set schema or schema_file, not both`);
  if (config.schema_file !== undefined) {
    try {
      return readFileSync(config.schema_file, 'utf8');
    } catch (err) {
      throw new Error(`${codec}: cannot read schema_file '${config.schema_file}': ${(err as Error).message}`);
    }
  }
  if (config.schema === undefined) {
    if (config.registry === undefined) throw new Error(`${codec}: needs config: schema, schema_file or registry`);
    return undefined;
  }
  return typeof config.schema === 'string' ? config.schema : JSON.stringify(config.schema);
}

/**
 * The part of the avro and protobuf codecs that does not depend on the
 * format: a local schema (inline or a file) for bare frames, or a schema
 * registry and the Confluent wire format. With a registry, frames start
 * with magic byte 0 and the schema id; decoding compiles the writer's schema
 * of each id once; encoding writes with the id resolved when the ramp
 * starts (`open`): the local schema's id under the subject (looked up, or
 * registered with `auto_register`), else the subject's latest version.
 *
 * `S` is a compiled schema, made by the format from schema text.
 */
export abstract class SchemaCodec<S> implements Codec {
  /** the config's own schema, compiled; undefined when only the registry has schemas */
  protected readonly local: S | undefined;
  private readonly localText: string | undefined;
  private readonly registry: SchemaRegistry | undefined;
  private readonly subject: string | undefined;
  /** writer schemas by id, compiled */
  private readonly writers = new Map<number, S>();
  /** what `encode` writes with, once `open` has resolved it */
  private writer: { schema: S; header: Buffer } | undefined;

  constructor(
    readonly name: string,
    private readonly schemaType: SchemaType,
    protected readonly config: SchemaCodecConfig,
  ) {
    this.localText = localSchemaText(name, config);
    this.local = this.localText === undefined ? undefined : this.compile(this.localText, 'the config');
    if (config.registry) {
      this.registry = SchemaRegistry.for(config.registry);
      this.subject = subjectOf(config.registry);
    }
  }

  /** Schema text to a compiled schema; `where` names where the text came from, for errors. */
  protected abstract compile(text: string, where: string): S;
  /** Reads one value from `frame` at `offset` (past the wire header), written with `writer`. */
  protected abstract read(writer: S, frame: Buffer, offset: number): unknown;
  /** Writes one value with `schema`, without any header. */
  protected abstract write(schema: S, value: unknown): Buffer;
  /** The bytes after the 5-byte header that a frame written with `schema` starts with (protobuf's message indexes). */
  protected abstract prefix(schema: S): Buffer;

  async open(side: 'onramp' | 'offramp'): Promise<void> {
    const { registry, subject } = this;
    if (!registry) return;
    if (side === 'onramp') {
      if (subject !== undefined) await registry.prefetch(subject);
      return;
    }
    if (subject === undefined) throw new Error(`${this.name}: encoding through a registry needs registry.topic or registry.subject`);
    const { local, localText } = this;
    if (local !== undefined && localText !== undefined) {
      // the registry client came from config.registry, so it is there
      const id = await registry.idOf(subject, localText, this.schemaType, this.config.registry?.auto_register === true);
      this.writer = { schema: local, header: this.headerFor(id, local) };
      return;
    }
    const latest = await registry.latest(subject);
    const schema = this.compileRegistered(latest, registry);
    this.writer = { schema, header: this.headerFor(latest.id, schema) };
  }

  decode(frame: Buffer): unknown {
    if (!this.registry) return this.read(this.ownSchema(), frame, 0);
    const id = schemaIdOf(frame, this.name);
    let writer = this.writers.get(id);
    if (writer === undefined) this.writers.set(id, (writer = this.compileRegistered(this.registry.schemaNow(id), this.registry)));
    return this.read(writer, frame, HEADER_LENGTH);
  }

  encode(value: unknown): Buffer {
    if (!this.registry) return this.write(this.ownSchema(), value);
    // a codec made by name alone (codec_map) has no registry: this is one whose ramp never opened it
    if (!this.writer) throw new Error(`${this.name}: no schema to encode with: the codec was not opened by an offramp`);
    const body = this.write(this.writer.schema, value);
    return Buffer.concat([this.writer.header, body], this.writer.header.length + body.length);
  }

  private headerFor(id: number, schema: S): Buffer {
    return Buffer.concat([header(id), this.prefix(schema)]);
  }

  /** The config's schema, which a codec without a registry has (localSchemaText throws when there is neither). */
  private ownSchema(): S {
    if (this.local === undefined) throw new Error(`${this.name}: needs config: schema, schema_file or registry`);
    return this.local;
  }

  private compileRegistered(registered: RegisteredSchema, registry: SchemaRegistry): S {
    const where = `schema id ${registered.id} from ${registry.url}`;
    if (registered.schemaType !== this.schemaType) throw new Error(`${this.name}: ${where} is a ${registered.schemaType} schema, not ${this.schemaType}`);
    if (registered.references.length > 0) throw new Error(`${this.name}: ${where} has schema references, which eddy does not resolve`);
    return this.compile(registered.schema, where);
  }
}
