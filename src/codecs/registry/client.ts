import { SyncGet, type GetReply } from './sync-get';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Input } from '../../schema/typed';

export type SchemaType = 'AVRO' | 'PROTOBUF';

/** A schema as the registry serves it. */
export interface RegisteredSchema {
  id: number;
  /** a SchemaType, or another the registry knows (JSON) */
  schemaType: string;
  schema: string;
  /** other schemas this one imports (not resolved by eddy: a schema with any is refused) */
  references: unknown[];
}

/** A schema as the registry answers it: `schemaType` is left out for AVRO, `references` when there are none. */
interface SchemaAnswer {
  schemaType?: string;
  schema: string;
  references?: unknown[];
}

const DEFAULT_TIMEOUT_MS = 5000;

/** The config's schema (shared by the avro and protobuf codecs). */
export const registrySchema = s.object(
  {
    url: s.string({ pattern: '^https?://', description: 'base URL, e.g. http://localhost:8081 (Apicurio: http://HOST:PORT/apis/ccompat/v7)' }),
    topic: s.string({ minLength: 1, description: 'the subject is `<topic>-value` (topic name strategy)' }),
    subject: s.string({ minLength: 1, description: 'the subject itself, instead of `topic`' }),
    username: s.string({ description: 'HTTP basic auth user' }),
    password: s.string({ writeOnly: true, description: 'HTTP basic auth password' }),
    auto_register: s.boolean({ default: false, description: 'encoding with a local schema: register it under the subject when it is not there yet' }),
    timeout_ms: duration('each registry request fails after this long', { default: DEFAULT_TIMEOUT_MS }),
  },
  {
    required: ['url'],
    description: 'a schema registry speaking the Confluent REST API: frames carry the Confluent wire format (magic byte 0, 4-byte schema id)',
  },
);

/** `registry:` in an avro or protobuf codec's config (auto_register and timeout_ms are defaulted in code too, for codecs made without the schema). */
export type RegistryConfig = Input<typeof registrySchema>;

/** How long a failed fetch of a schema id is remembered: frames with that id fail fast meanwhile. */
export const RETRY_AFTER_MS = 10_000;

/** The subject schemas are registered under: `subject`, else `<topic>-value`; undefined when the config names neither. */
export function subjectOf(config: RegistryConfig): string | undefined {
  if (config.subject !== undefined && config.topic !== undefined) throw new Error('registry: set subject or topic, not both');
  return config.subject ?? (config.topic !== undefined ? `${config.topic}-value` : undefined);
}

/**
 * A schema registry speaking the Confluent REST API. Schemas by id are
 * cached for the life of the process and shared by every codec that names
 * the same registry (an id's schema never changes).
 */
export class SchemaRegistry {
  private static readonly shared = new Map<string, SchemaRegistry>();
  private readonly byId = new Map<number, RegisteredSchema>();
  private readonly failed = new Map<number, { message: string; at: number }>();
  private readonly sync = new SyncGet();
  private readonly headers: Record<string, string>;
  private readonly base: string;

  private constructor(
    config: RegistryConfig,
    private readonly timeoutMs: number,
  ) {
    this.base = config.url.replace(/\/+$/, '');
    this.headers = { accept: 'application/vnd.schemaregistry.v1+json, application/json' };
    if (config.username !== undefined) {
      this.headers.authorization = `Basic ${Buffer.from(`${config.username}:${config.password ?? ''}`).toString('base64')}`;
    }
  }

  /** The registry at `config.url` (with these credentials), made once per process. */
  static for(config: RegistryConfig): SchemaRegistry {
    const timeoutMs = durationMs(config.timeout_ms ?? DEFAULT_TIMEOUT_MS, 'registry.timeout_ms');
    const key = JSON.stringify([config.url, config.username, config.password, timeoutMs]);
    let registry = SchemaRegistry.shared.get(key);
    if (!registry) SchemaRegistry.shared.set(key, (registry = new SchemaRegistry(config, timeoutMs)));
    return registry;
  }

  get url(): string {
    return this.base;
  }

  /** A schema by id, for a frame being decoded: from the cache, else fetched while the thread waits (see SyncGet). */
  schemaNow(id: number): RegisteredSchema {
    const known = this.byId.get(id);
    if (known) return known;
    const failure = this.failed.get(id);
    if (failure && Date.now() - failure.at < RETRY_AFTER_MS) throw new Error(failure.message);
    const path = `/schemas/ids/${id}`;
    let reply: GetReply;
    try {
      reply = this.sync.get(this.base + path, this.headers, this.timeoutMs);
    } catch (err) {
      throw this.remember(id, `cannot reach ${this.base}: ${(err as Error).message}`);
    }
    if (reply.status !== 200) throw this.remember(id, this.statusMessage(path, reply.status, reply.body));
    return this.keep(id, JSON.parse(reply.body) as SchemaAnswer);
  }

  /** A schema by id, fetched if not cached. */
  async schema(id: number): Promise<RegisteredSchema> {
    const known = this.byId.get(id);
    if (known) return known;
    const body = (await this.request('GET', `/schemas/ids/${id}`)) as SchemaAnswer;
    return this.keep(id, body);
  }

  /** The latest version of a subject (what an encoder without a schema of its own writes with). */
  async latest(subject: string): Promise<RegisteredSchema> {
    const body = (await this.request('GET', `/subjects/${encodeURIComponent(subject)}/versions/latest`)) as SchemaAnswer & { id: number };
    return this.keep(body.id, body);
  }

  /** Every version of a subject into the cache, so decoding them never waits; none when the subject does not exist yet. */
  async prefetch(subject: string): Promise<void> {
    const versions = (await this.request('GET', `/subjects/${encodeURIComponent(subject)}/versions`, undefined, true)) as number[] | undefined;
    for (const version of versions ?? []) {
      const body = (await this.request('GET', `/subjects/${encodeURIComponent(subject)}/versions/${version}`)) as SchemaAnswer & { id: number };
      this.keep(body.id, body);
    }
  }

  /** The id of `schema` under `subject`: looked up, or registered when `register` is set; throws when it is neither. */
  async idOf(subject: string, schema: string, schemaType: SchemaType, register: boolean): Promise<number> {
    const body = { schema, schemaType };
    const path = `/subjects/${encodeURIComponent(subject)}`;
    const found = (await this.request('POST', path, body, true)) as { id: number } | undefined;
    if (found) return found.id;
    if (!register) {
      throw new Error(`the schema is not registered under subject '${subject}' at ${this.base}: register it, or set registry.auto_register: true`);
    }
    return ((await this.request('POST', `${path}/versions`, body)) as { id: number }).id;
  }

  private keep(id: number, body: SchemaAnswer): RegisteredSchema {
    const schema = { id, schemaType: body.schemaType ?? 'AVRO', schema: body.schema, references: body.references ?? [] };
    this.byId.set(id, schema);
    this.failed.delete(id);
    return schema;
  }

  private remember(id: number, message: string): Error {
    const full = `schema id ${id}: ${message}`;
    this.failed.set(id, { message: `${full} (not asked again for ${RETRY_AFTER_MS / 1000} s)`, at: Date.now() });
    return new Error(full);
  }

  /** One request; a 404 is undefined when `missingOk`, any other failure throws naming the URL and the registry's message. */
  private async request(method: 'GET' | 'POST', path: string, body?: object, missingOk = false): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(this.base + path, {
        method,
        headers: body ? { ...this.headers, 'content-type': 'application/vnd.schemaregistry.v1+json' } : this.headers,
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause;
      throw new Error(`cannot reach ${this.base}${path}: ${(err as Error).message}${cause ? `: ${cause.message}` : ''}`);
    }
    const text = await response.text();
    if (response.status === 404 && missingOk) return undefined;
    if (response.status !== 200) throw new Error(this.statusMessage(path, response.status, text));
    return JSON.parse(text) as unknown;
  }

  private statusMessage(path: string, status: number, text: string): string {
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      // not JSON: the text as it came
    }
    return `${this.base}${path} answered ${status}: ${message}`;
  }
}
