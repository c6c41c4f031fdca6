import { conflict, invalid, notFound } from '../core/errors';
import { artefactSchemas, SchemaValidator } from '../schema/artefacts';
import { buildGraph, checkNodePorts } from '../pipeline/graph';
import { hasUrlCredentialsDeep, maskUrlCredentialsDeep } from '../core/redact';
import { redactSecrets, secretPaths } from '../schema/secrets';
import type { JsonSchema } from '../schema/json-schema';
import { processorConfig, processorName, type ProcessorSpec } from '../processors/processor';
import { codecConfig, codecName, type CodecSpec } from '../codecs/spec';
import type { Registries } from './registries';
import type { Artefact, BindingArtefact, OnrampArtefact, PipelineArtefact, RampArtefact, StoredPipeline } from './artefacts';
import { KINDS, type Kind } from './urls';
import type { PublishPolicy } from './policy';

interface Stored {
  artefact: Artefact;
  system: boolean;
}

/**
 * The artefact repository: artefacts by kind and id, validated on publish
 * against the spec's schemas and against the registries (types, codecs,
 * processors, operator configs), so that a publish either stores a runnable
 * artefact or fails with a message naming the field.
 */
export class Repository {
  private readonly store = new Map<Kind, Map<string, Stored>>(KINDS.map((k) => [k, new Map()]));

  constructor(
    private readonly registries: Registries,
    private readonly validator: SchemaValidator,
    /** what artefacts may reach (paths, exit): asked last, on a valid artefact */
    private readonly policy?: PublishPolicy,
  ) {}

  /** The artefacts of one kind: every kind has its map from the start. */
  private artefacts(kind: Kind): Map<string, Stored> {
    const artefacts = this.store.get(kind);
    if (!artefacts) throw new Error(`unknown artefact kind '${kind}'`);
    return artefacts;
  }

  list(kind: Kind): string[] {
    return [...this.artefacts(kind).keys()];
  }

  get(kind: Kind, id: string): Artefact {
    const stored = this.artefacts(kind).get(id);
    if (!stored) throw notFound(`${kind} '${id}' not found`);
    return stored.artefact;
  }

  has(kind: Kind, id: string): boolean {
    return this.artefacts(kind).has(id);
  }

  isSystem(kind: Kind, id: string): boolean {
    return this.artefacts(kind).get(id)?.system === true;
  }

  publish(kind: Kind, body: unknown, system = false): Artefact {
    const artefact = this.validate(kind, body);
    const kindStore = this.artefacts(kind);
    if (kindStore.has(artefact.id)) throw conflict(`${kind} '${artefact.id}' already exists`);
    kindStore.set(artefact.id, { artefact, system });
    return artefact;
  }

  /** Removes an artefact; the caller has checked that no instance of it runs. */
  remove(kind: Kind, id: string): Artefact {
    const stored = this.artefacts(kind).get(id);
    if (!stored) throw notFound(`${kind} '${id}' not found`);
    if (stored.system) throw conflict(`${kind} '${id}' is a system artefact and cannot be deleted`);
    this.artefacts(kind).delete(id);
    return stored.artefact;
  }

  /**
   * Checks a body and returns the artefact to store (a copy; defaults are
   * not written into it, but for a pipeline's chain: see chainIfUnlinked).
   */
  validate(kind: Kind, body: unknown): Artefact {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid(`${kind}: the body must be an object`);
    const artefact = structuredClone(body) as Artefact;
    const names = {
      codecs: this.registries.codecs.names(),
      preprocessors: this.registries.preprocessors.names(),
      postprocessors: this.registries.postprocessors.names(),
    };
    this.validator.check(this.schemas(names)[kind], artefact, '');
    // before the types' own checks: those may read the files the artefact names (a listener's TLS certificate),
    // and a path outside --allow-path must be refused as such, unread
    this.policy?.check(kind, artefact, this.registries);
    if (kind === 'pipeline') this.chainIfUnlinked(artefact as PipelineArtefact);
    if (kind === 'pipeline') this.validatePipeline(artefact as StoredPipeline); // chainIfUnlinked filled in interface and links
    if (kind === 'onramp') this.validateRamp(artefact as OnrampArtefact, 'onramp');
    if (kind === 'offramp') this.validateRamp(artefact as RampArtefact, 'offramp');
    if (kind === 'binding') validateBindingShape(artefact as BindingArtefact);
    return artefact;
  }

  /**
   * The artefact as eddy shows it (REST API, status, console): every secret
   * its configs set (schema `writeOnly`, schema/secrets.ts) as "***", and
   * the credentials of every URL in it masked, in any field (core/redact.ts).
   */
  redacted<A extends Artefact>(kind: Kind, artefact: A): A {
    const parts = this.configParts(kind, artefact);
    // URLs are looked at once, over the whole artefact (its configs included)
    if (!hasUrlCredentialsDeep(artefact) && parts.every(([schema, config]) => secretPaths(schema, config).length === 0)) return artefact;
    const copy = structuredClone(artefact);
    for (const [schema, , set] of this.configParts(kind, copy)) set(redactSecrets(schema, set(undefined)));
    return maskUrlCredentialsDeep(copy);
  }

  /** Where an artefact sets a secret in clear text (`config.password`, `nodes[0].config.table.password`). */
  secretsIn(kind: Kind, artefact: Artefact): string[] {
    return this.configParts(kind, artefact).flatMap(([schema, config, , field]) => secretPaths(schema, config).map((p) => `${field}.${p}`));
  }

  /**
   * Each config of an artefact with its schema, its field name, and an
   * accessor (`set(undefined)` reads, `set(v)` replaces): a ramp's config,
   * a pipeline's node configs. A type that is not registered has none.
   */
  private configParts(kind: Kind, artefact: Artefact): [JsonSchema | undefined, unknown, (v: unknown) => unknown, string][] {
    if (kind === 'onramp' || kind === 'offramp') {
      const ramp = artefact as RampArtefact;
      const registry = kind === 'onramp' ? this.registries.onramps : this.registries.offramps;
      const parts: [JsonSchema | undefined, unknown, (v: unknown) => unknown, string][] = [];
      if (ramp.config !== undefined && registry.has(ramp.type)) {
        parts.push([
          registry.get(ramp.type).configSchema,
          ramp.config,
          (v) => (v === undefined ? ramp.config : (ramp.config = v as Record<string, unknown>)),
          'config',
        ]);
      }
      // a codec with config (`codec: {name, config}`): a registry's password
      const codec = ramp.codec;
      if (typeof codec === 'object' && codec.config !== undefined && this.registries.codecs.has(codec.name)) {
        parts.push([
          this.registries.codecs.get(codec.name).configSchema,
          codec.config,
          (v) => (v === undefined ? codec.config : (codec.config = v as Record<string, unknown>)),
          'codec.config',
        ]);
      }
      return parts;
    }
    if (kind === 'pipeline') {
      return (artefact as PipelineArtefact).nodes.flatMap((node, i) => {
        if (node.config === undefined || !this.registries.operators.has(node.type)) return [];
        const schema = this.registries.operators.get(node.type).configSchema;
        return [[schema, node.config, (v: unknown) => (v === undefined ? node.config : (node.config = v as Record<string, unknown>)), `nodes[${i}].config`]];
      }) as [JsonSchema | undefined, unknown, (v: unknown) => unknown, string][];
    }
    return [];
  }

  /** The ramp's config with the type's defaults filled in, ready to instantiate. */
  rampConfig(kind: 'onramp' | 'offramp', artefact: RampArtefact): Record<string, unknown> {
    const type = kind === 'onramp' ? this.registries.onramps.get(artefact.type) : this.registries.offramps.get(artefact.type);
    const config = structuredClone(artefact.config ?? {});
    this.validator.check(type.configSchema, config, 'config');
    return config;
  }

  /**
   * A ramp's codec config with the codec's defaults filled in: `codec.config`
   * against the codec type's schema, undefined when the artefact names the
   * codec alone. A codec without a schema takes no config.
   */
  codecConfig(spec: CodecSpec): Record<string, unknown> | undefined {
    const type = this.registries.codecs.get(codecName(spec), 'codec');
    const config = codecConfig(spec);
    if (config === undefined) return undefined;
    if (!type.configSchema) throw invalid(`codec.config: the ${type.name} codec takes no config`);
    const copy = structuredClone(config);
    this.validator.check(type.configSchema, copy, 'codec.config');
    return copy;
  }

  operatorConfig(type: string, config: Record<string, unknown> | undefined, where: string): Record<string, unknown> {
    const op = this.registries.operators.get(type, `${where}.type`);
    const copy = structuredClone(config ?? {});
    if (op.configSchema) this.validator.check(op.configSchema, copy, `${where}.config`);
    return copy;
  }

  /**
   * A pipeline without `links` chains its nodes in the order written: its
   * first input -> the first node -> ... -> the last node -> its first
   * output, and every node that has an `err` port to the pipeline's `err`.
   * Without `interface`: inputs [in], outputs [out, err]. Both are written
   * into the stored artefact, so what runs is what GET shows.
   */
  private chainIfUnlinked(p: PipelineArtefact): void {
    p.interface ??= { inputs: ['in'], outputs: ['out', 'err'] };
    if (p.links !== undefined) return;
    const input = p.interface.inputs?.[0] ?? 'in';
    const output = p.interface.outputs?.[0] ?? 'out';
    const links: Record<string, string[]> = {};
    let from = input;
    for (const node of p.nodes) {
      links[from] = [node.id];
      if (this.hasErrPort(node.type, node.config)) links[`${node.id}/err`] = ['err'];
      from = node.id;
    }
    links[from] = [output];
    p.links = links;
  }

  /** Whether a node of this type emits on `err` (a type that does not say which ports it has may emit on any). */
  private hasErrPort(type: string, config: unknown): boolean {
    if (!this.registries.operators.has(type)) return false; // refused below, naming the type
    try {
      const ports = this.registries.operators.get(type).outputPorts?.(config ?? {});
      return ports === undefined || ports.includes('err');
    } catch {
      return false; // a config the type refuses: validatePipeline says why
    }
  }

  private validatePipeline(p: StoredPipeline): void {
    buildGraph(p);
    const ports = new Map<string, readonly string[] | undefined>();
    for (const [i, node] of p.nodes.entries()) {
      const where = `nodes[${i}]`;
      const config = this.operatorConfig(node.type, node.config, where);
      const type = this.registries.operators.get(node.type);
      type.validate?.(config, node.id);
      ports.set(node.id, type.outputPorts?.(config));
    }
    checkNodePorts(p, (id) => ports.get(id));
  }

  private validateRamp(r: RampArtefact, kind: 'onramp' | 'offramp'): void {
    const type = kind === 'onramp' ? this.registries.onramps.get(r.type, 'type') : this.registries.offramps.get(r.type, 'type');
    checkLinked(r, kind, type.linkable);
    const config = this.rampConfig(kind, r);
    // the paths it names are confined before the type's own checks read any file (a TLS certificate, a schema):
    // a file outside the allowed paths is refused unread, not probed
    this.policy?.check(kind, r, this.registries);
    try {
      type.validate?.(config);
    } catch (err) {
      throw invalid(`config.${(err as Error).message}`);
    }
    if (r.codec !== undefined) this.codecConfig(r.codec);
    this.checkProcessors(r.preprocessors, 'preprocessors', this.registries.preprocessors);
    this.checkProcessors(r.postprocessors, 'postprocessors', this.registries.postprocessors);
  }

  /** Each processor's config against its type's schema: `preprocessors[0].config: unknown field 'bogus'`. */
  private checkProcessors(specs: ProcessorSpec[] | undefined, field: string, registry: Registries['preprocessors'] | Registries['postprocessors']): void {
    for (const [i, spec] of (specs ?? []).entries()) {
      const type = registry.get(processorName(spec), `${field}[${i}]`);
      // a copy: the validator fills in defaults, and the stored artefact keeps what was published
      this.validator.check(type.configSchema, structuredClone(processorConfig(spec)), `${field}[${i}].config`);
    }
  }

  private schemaCache?: { key: string; schemas: ReturnType<typeof artefactSchemas> };
  private schemas(names: Parameters<typeof artefactSchemas>[0]): ReturnType<typeof artefactSchemas> {
    const key = JSON.stringify(names);
    if (this.schemaCache?.key !== key) this.schemaCache = { key, schemas: artefactSchemas(names) };
    return this.schemaCache.schemas;
  }
}

/**
 * `linked` only where the type can be linked (and always where it must be);
 * the processors of the reverse direction only on a linked ramp, where
 * replies (onramp) or responses (offramp) travel back through them.
 */
function checkLinked(r: RampArtefact, kind: 'onramp' | 'offramp', linkable: boolean | 'required' | undefined): void {
  const linked = r.linked === true;
  if (linked && !linkable) throw invalid(`linked: the ${r.type} ${kind} cannot be a linked transport`);
  if (!linked && linkable === 'required') throw invalid(`linked: the ${r.type} ${kind} works only as a linked transport: set linked: true`);
  const reverse = kind === 'onramp' ? 'postprocessors' : 'preprocessors';
  if (!linked && (r[reverse]?.length ?? 0) > 0) {
    throw invalid(
      `${reverse}: only a linked ${kind} has ${reverse} (they apply to its ${kind === 'onramp' ? 'replies' : 'responses'}); set linked: true or remove them`,
    );
  }
}

function validateBindingShape(b: BindingArtefact): void {
  for (const [src, dsts] of Object.entries(b.links)) {
    if (dsts.length === 0) throw invalid(`links.${src}: must name at least one destination`);
  }
}
