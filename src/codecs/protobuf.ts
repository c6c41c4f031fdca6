import * as protobuf from 'protobufjs';
import type { CodecType } from './codec';
import { fromValue, toValue } from './protobuf-values';
import { registrySchema } from './registry/client';
import { SchemaCodec } from './registry/schema-codec';
import { s } from '../schema/typed';
import type { Input } from '../schema/typed';

const configSchema = s.object(
  {
    schema: s.string({ description: 'the .proto text (proto2 or proto3)' }),
    schema_file: s.string({ path: 'read', minLength: 1, description: 'a .proto file holding the schema' }),
    message: s.string({ minLength: 1, description: 'the message type a frame holds, e.g. shop.Order; default: the first message of the schema' }),
    registry: registrySchema,
  },
  {
    description: 'Protocol Buffers: one message per frame, with a .proto schema given inline, in a file, or from a schema registry.',
    anyOf: [{ required: ['schema'] }, { required: ['schema_file'] }, { required: ['registry'] }],
  },
);

type ProtobufConfig = Input<typeof configSchema>;

/** A compiled .proto: its top-level messages in file order (what the wire format's message indexes count), and the one frames hold. */
interface ProtoSchema {
  top: protobuf.Type[];
  type: protobuf.Type;
  /** `type`'s message indexes */
  indexes: number[];
}

/**
 * Protocol Buffers, one message per frame (see docs/codecs/protobuf.md for
 * the value mapping). Without a registry a frame is the bare message; with
 * one it is in the Confluent wire format: magic byte, schema id, then the
 * message indexes that pick the message type in the schema (zigzag varints:
 * a count and the indexes, or one 0 byte for the first message).
 */
class ProtobufCodec extends SchemaCodec<ProtoSchema> {
  constructor(config: ProtobufConfig) {
    super('protobuf', 'PROTOBUF', config);
  }

  protected compile(text: string, where: string): ProtoSchema {
    const root = new protobuf.Root();
    let parsed: protobuf.IParserResult;
    try {
      parsed = protobuf.parse(text, root, { keepCase: true });
      for (const name of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
        const known = protobuf.common.get(name);
        if (!known?.nested) throw new Error(`it imports '${name}'; eddy loads only the google/protobuf well-known types`);
        root.addJSON(known.nested);
      }
      root.resolveAll();
    } catch (err) {
      throw new Error(`protobuf: the schema of ${where} is invalid: ${(err as Error).message}`);
    }
    const file = parsed.package ? (root.lookup(parsed.package) as protobuf.Namespace) : root;
    const top = messagesOf(file);
    if (top.length === 0) throw new Error(`protobuf: the schema of ${where} has no message`);
    // (the base class compiles the config's schema in its constructor: the config is read from there)
    const name = (this.config as ProtobufConfig).message;
    let type = top[0];
    if (name !== undefined) {
      const found = file.lookup(name);
      if (!(found instanceof protobuf.Type)) throw new Error(`protobuf: the schema of ${where} has no message ${name}`);
      type = found;
    }
    return { top, type, indexes: indexesOf(type, file) };
  }

  protected read(writer: ProtoSchema, frame: Buffer, offset: number): unknown {
    let type = writer.type;
    let pos = offset;
    if (offset > 0) {
      const { indexes, end } = readIndexes(frame, offset);
      pos = end;
      // a schema of the config reads every frame (fields match by number); else the writer's message the indexes name
      type = this.local?.type ?? messageAt(writer, indexes);
    }
    try {
      return toValue(type, type.decode(frame.subarray(pos)) as unknown as Record<string, unknown>);
    } catch (err) {
      throw new Error(`protobuf: cannot decode as ${type.fullName.slice(1)}: ${(err as Error).message}`);
    }
  }

  protected write(schema: ProtoSchema, value: unknown): Buffer {
    let message: Record<string, unknown>;
    try {
      message = fromValue(schema.type, value);
    } catch (err) {
      throw new Error(`protobuf: cannot encode as ${schema.type.fullName.slice(1)}: ${(err as Error).message}`);
    }
    const bytes = schema.type.encode(message).finish();
    return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  protected prefix(schema: ProtoSchema): Buffer {
    const { indexes } = schema;
    if (indexes.length === 1 && indexes[0] === 0) return Buffer.from([0]);
    return Buffer.from([indexes.length, ...indexes].flatMap(zigzagVarint));
  }
}

function messagesOf(namespace: protobuf.NamespaceBase): protobuf.Type[] {
  return namespace.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type);
}

/** The path of indexes to `type` from the file's top-level messages. */
function indexesOf(type: protobuf.Type, file: protobuf.NamespaceBase): number[] {
  const path: number[] = [];
  for (let t: protobuf.NamespaceBase = type; t !== file;) {
    const parent = t.parent;
    if (parent === null) throw new Error(`protobuf: message ${type.fullName.slice(1)} is not in the schema's own package`);
    const siblings: readonly protobuf.NamespaceBase[] = messagesOf(parent);
    path.unshift(siblings.indexOf(t));
    t = parent;
  }
  return path;
}

function messageAt(schema: ProtoSchema, indexes: number[]): protobuf.Type {
  let list = schema.top;
  let type: protobuf.Type | undefined;
  for (const i of indexes) {
    // an index off the wire: it may name no message
    const found = list[i] as protobuf.Type | undefined;
    if (!found) throw new Error(`protobuf: message indexes [${indexes.join(', ')}] name no message of the schema`);
    type = found;
    list = messagesOf(found);
  }
  // readIndexes gives at least one index
  if (type === undefined) throw new Error(`protobuf: message indexes [] name no message of the schema`);
  return type;
}

function readIndexes(frame: Buffer, offset: number): { indexes: number[]; end: number } {
  let pos = offset;
  const next = (): number => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      if (pos >= frame.length) throw new Error('protobuf: frame ends inside the message indexes');
      if (shift > 28) throw new Error('protobuf: malformed message indexes');
      const byte = frame[pos++];
      n += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) break;
    }
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  };
  const count = next();
  if (count === 0) return { indexes: [0], end: pos };
  if (count < 0 || count > 100) throw new Error(`protobuf: malformed message indexes (count ${count})`);
  const indexes: number[] = [];
  for (let i = 0; i < count; i++) indexes.push(next());
  return { indexes, end: pos };
}

function zigzagVarint(n: number): number[] {
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  const out: number[] = [];
  while (z >= 128) {
    out.push((z % 128) | 0x80);
    z = Math.floor(z / 128);
  }
  out.push(z);
  return out;
}

export const protobufCodec: CodecType = {
  name: 'protobuf',
  summary: 'One Protocol Buffers message per frame; .proto inline, from a file or from a schema registry (Confluent wire format). Needs config.',
  configSchema,
  create: (config) => {
    if (config === undefined) throw new Error('protobuf: needs config (codec: {name: protobuf, config: {schema | schema_file | registry, message}})');
    return new ProtobufCodec(config);
  },
};
