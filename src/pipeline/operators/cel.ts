import { Observable } from '../../core/rx';
import type { EddyEvent, Meta, PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import { withMeta } from '../../core/lazy-event';
import { unreadFields } from '../../codecs/json/top-level';
import type { OperatorNode, OperatorType } from '../operator';
import { LazyCelScope, compileCel, type CelProgram } from '../cel/engine';
import { withError } from './_shared/support';
import { setOwn } from '../../codecs/integers';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const expression = (description: string) => s.string({ minLength: 1, description });

const configSchema = s.object(
  {
    filter: expression('drop the event unless this expression is true (without it every event passes)'),
    meta: s.record(s.string({ minLength: 1 }), { description: 'metadata variable -> expression' }),
    value: expression("expression whose result replaces the event's data (set and remove then apply to it)"),
    set: s.record(s.string({ minLength: 1 }), { description: 'dotted field path -> expression, patching the event data' }),
    remove: s.array(s.string({ minLength: 1 }), { description: 'dotted field paths removed from the event data' }),
    route: expression('expression naming the output port (default out)'),
  },
  { description: 'Filters, classifies, reshapes, patches and routes events with CEL expressions.' },
);

/** filter (drop unless true), meta (variable -> expression), value (replaces the data), set (dotted path -> expression), remove (dotted paths), route (the output port) */
export type CelConfig = Input<typeof configSchema>;

interface Compiled {
  filter?: CelProgram;
  /** key, program, and the field's name for errors (`meta.<key>`) */
  meta: [string, CelProgram, string][];
  value?: CelProgram;
  set: [string[], string, CelProgram][];
  remove: string[][];
  route?: CelProgram;
  /**
   * The top-level fields every expression together reads, when that is all
   * they read and nothing patches the data (`set`, `remove` copy the whole
   * event): an undecoded json frame then gives just these (see `eventData`).
   */
  frameKeys?: readonly string[];
}

/** The JS type the interpreter's value had (an int was a bigint), so the message stays what it was. */
function jsType(value: unknown): string {
  return typeof value === 'number' && Number.isSafeInteger(value) ? 'bigint' : typeof value;
}

function splitPath(path: string, field: string, nodeId: string): string[] {
  const parts = path.split('.');
  if (parts.some((p) => p === '')) throw invalid(`runtime::cel node ${nodeId}: ${field}: empty segment in path ${JSON.stringify(path)}`);
  return parts;
}

/** Compiles every expression of a config once; errors name the node, the field and the position. */
export function compileConfig(config: CelConfig, nodeId: string): Compiled {
  const compile = (field: string, src: string): CelProgram => {
    try {
      return compileCel(src);
    } catch (err) {
      throw invalid(`runtime::cel node ${nodeId}: ${field}: ${(err as Error).message}`);
    }
  };
  const compiled: Compiled = {
    filter: config.filter === undefined ? undefined : compile('filter', config.filter),
    meta: Object.entries(config.meta ?? {}).map(([k, src]) => [k, compile(`meta.${k}`, src), `meta.${k}`]),
    value: config.value === undefined ? undefined : compile('value', config.value),
    set: Object.entries(config.set ?? {}).map(([path, src]) => [splitPath(path, `set.${path}`, nodeId), path, compile(`set.${path}`, src)]),
    remove: (config.remove ?? []).map((path, i) => splitPath(path, `remove[${i}]`, nodeId)),
    route: config.route === undefined ? undefined : compile('route', config.route),
  };
  compiled.frameKeys = frameKeys(compiled);
  return compiled;
}

function frameKeys(c: Compiled): string[] | undefined {
  if (c.set.length > 0 || c.remove.length > 0) return undefined;
  const programs = [c.filter, c.route, c.value, ...c.meta.map(([, p]) => p)].filter((p): p is CelProgram => p !== undefined);
  const names = new Set<string>();
  for (const p of programs) {
    if (p.eventFields === undefined) return undefined;
    for (const f of p.eventFields) names.add(f);
  }
  return [...names];
}

/**
 * The data the expressions see: for an event still undecoded from a json
 * frame, when the expressions read only top-level fields, an object of just
 * those fields taken from the frame (the event stays undecoded, and goes out
 * as the frame it came in as); otherwise the event's data, decoded.
 */
function eventData(c: Compiled, event: EddyEvent): unknown {
  // undefined: decoded already, or something the extractor does not vouch for: decode it all
  return (c.frameKeys !== undefined ? unreadFields(event, c.frameKeys) : undefined) ?? event.data;
}

/** The event with new data and meta, copied only when something changed; an unread lazy event stays unread when only meta changed. */
function outputEvent(event: EddyEvent, meta: Meta, data: unknown, dataChanged: boolean): EddyEvent {
  if (!dataChanged) return meta === event.meta ? event : withMeta(event, meta);
  const copy = withMeta(event, meta);
  copy.data = data;
  return copy;
}

/** Copies the objects along `path` (never mutating the input) and sets the leaf. */
export function setPath(data: unknown, path: readonly string[], value: unknown): unknown {
  const [head, ...rest] = path;
  const base = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  if (base === undefined && data !== undefined && data !== null) throw new Error(`cannot set ${head} on a non-object value`);
  return { ...base, [head]: rest.length === 0 ? value : setPath(base?.[head], rest, value) };
}

function removePath(data: unknown, path: readonly string[]): unknown {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  const [head, ...rest] = path;
  const obj = data as Record<string, unknown>;
  if (!(head in obj)) return data;
  const { [head]: child, ...others } = obj;
  return rest.length === 0 ? others : { ...others, [head]: removePath(child, rest) };
}

/**
 * Applies a compiled config to one event. Every expression sees the event as
 * it arrived (not the result of earlier `set`s), so their order never matters.
 * Returns null for a filtered-out event.
 */
export function applyCel(c: Compiled, event: EddyEvent, nodeId: string): PortEvent | null {
  let field = 'filter';
  try {
    // compiled expressions read the event as it is; the CEL conversion is made only if one runs interpreted
    const vars = new LazyCelScope(eventData(c, event), event.meta);
    if (c.filter !== undefined) {
      const keep = c.filter.evaluateJson(vars);
      if (typeof keep !== 'boolean') throw new Error(`must be a bool, got ${jsType(keep)}`);
      if (!keep) return null;
    }
    let port = 'out';
    if (c.route !== undefined) {
      field = 'route';
      const p = c.route.evaluateJson(vars);
      if (typeof p !== 'string' || p === '') throw new Error('must be a non-empty string naming a port');
      port = p;
    }
    let meta = event.meta;
    if (c.meta.length > 0) {
      // one copy of the event's meta for all the keys set (the input's is never changed)
      const out: Meta = { ...meta };
      for (const [key, program, name] of c.meta) {
        field = name;
        setOwn(out, key, program.evaluateJson(vars));
      }
      meta = out;
    }
    let dataChanged = false;
    let data: unknown;
    if (c.value !== undefined) {
      field = 'value';
      data = c.value.evaluateJson(vars);
      dataChanged = true;
    }
    if (c.set.length > 0 || c.remove.length > 0) {
      // set and remove have no frame keys (frameKeys): vars.data is the whole event here
      if (!dataChanged) data = vars.data;
      for (const [path, name, program] of c.set) {
        field = `set.${name}`;
        data = setPath(data, path, program.evaluateJson(vars));
      }
      for (const path of c.remove) data = removePath(data, path);
      dataChanged = data !== vars.data;
    }
    return { port, event: outputEvent(event, meta, data, dataChanged) };
  } catch (err) {
    return { port: 'err', event: withError(event, `runtime::cel node ${nodeId}: ${field}: ${(err as Error).message}`) };
  }
}

/** A runtime::cel node; an event its filter drops is handed to `drop` (the pipeline counts and acks it). */
export function celNode(config: CelConfig, nodeId: string, drop?: (event: EddyEvent, rule: string) => void): OperatorNode {
  const compiled = compileConfig(config, nodeId);
  return {
    ports: celPorts(config),
    apply: (input) =>
      new Observable<PortEvent>((subscriber) =>
        input.subscribe({
          next: (event) => {
            const out = applyCel(compiled, event, nodeId);
            if (out !== null) subscriber.next(out);
            else drop?.(event, 'filter');
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        }),
      ),
  };
}

/**
 * `err`, and the ports a `route` can name when each of its results is a
 * string literal; undefined (any port) when a route computes its port, or
 * does not compile (`validate` says why).
 */
function celPorts(config: CelConfig): readonly string[] | undefined {
  if (config.route === undefined) return ['err'];
  let literals: readonly string[] | undefined;
  try {
    literals = compileCel(config.route).literalResults;
  } catch {
    return undefined;
  }
  return literals && ['err', ...literals.filter((l) => l !== 'out' && l !== 'err')];
}

/** runtime::cel: filter, classify, reshape, patch and route events with CEL expressions. */
export const cel: OperatorType<CelConfig> = {
  name: 'runtime::cel',
  // it never spreads an event: new meta or data go through withMeta and the data setter, which an undecoded event
  // takes as it is; so it needs no own data property (reading fields from the frame leaves the event undecoded)
  forwardsUnchanged: true,
  configSchema,
  validate: (config, nodeId) => void compileConfig(config, nodeId),
  examples: [{}, { route: 'event.level == "error" ? "alerts" : "out"' }],
  outputPorts: (config) => celPorts(config),
  create: (config, ctx) => celNode(config, ctx.nodeId, ctx.drop?.bind(ctx)),
};
