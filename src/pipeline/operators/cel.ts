import { Observable } from '../../core/rx';
import type { EddyEvent, PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import type { OperatorNode, OperatorType } from '../operator';
import { LazyCelScope, compileCel, type CelProgram } from './cel-engine';
import { withError } from './support';

export interface CelConfig {
  /** drop the event unless this is true */
  filter?: string;
  /** metadata variable -> expression */
  meta?: Record<string, string>;
  /** field path (dotted) -> expression, patching the event data */
  set?: Record<string, string>;
  /** field paths (dotted) to remove from the event data */
  remove?: string[];
  /** expression naming the output port; `out` when absent */
  route?: string;
}

interface Compiled {
  filter?: CelProgram;
  meta: Array<[string, CelProgram]>;
  set: Array<[string[], string, CelProgram]>;
  remove: string[][];
  route?: CelProgram;
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
  return {
    filter: config.filter === undefined ? undefined : compile('filter', config.filter),
    meta: Object.entries(config.meta ?? {}).map(([k, src]) => [k, compile(`meta.${k}`, src)]),
    set: Object.entries(config.set ?? {}).map(([path, src]) => [splitPath(path, `set.${path}`, nodeId), path, compile(`set.${path}`, src)]),
    remove: (config.remove ?? []).map((path, i) => splitPath(path, `remove[${i}]`, nodeId)),
    route: config.route === undefined ? undefined : compile('route', config.route),
  };
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
    const vars = new LazyCelScope(event.data, event.meta);
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
    for (const [key, program] of c.meta) {
      field = `meta.${key}`;
      meta = { ...meta, [key]: program.evaluateJson(vars) };
    }
    let data = event.data;
    for (const [path, name, program] of c.set) {
      field = `set.${name}`;
      data = setPath(data, path, program.evaluateJson(vars));
    }
    for (const path of c.remove) data = removePath(data, path);
    return { port, event: data === event.data && meta === event.meta ? event : { ...event, data, meta } };
  } catch (err) {
    return { port: 'err', event: withError(event, `runtime::cel node ${nodeId}: ${field}: ${(err as Error).message}`) };
  }
}

export function celNode(config: CelConfig, nodeId: string): OperatorNode {
  const compiled = compileConfig(config, nodeId);
  return {
    ports: ['err'],
    apply: (input) =>
      new Observable<PortEvent>((subscriber) =>
        input.subscribe({
          next: (event) => {
            const out = applyCel(compiled, event, nodeId);
            if (out !== null) subscriber.next(out);
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        }),
      ),
  };
}

const exprSchema = { type: 'string', minLength: 1 };

/** runtime::cel: filter, classify, patch and route events with CEL expressions. */
export const cel: OperatorType<CelConfig> = {
  name: 'runtime::cel',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    description: 'Filters, classifies, patches and routes events with CEL expressions.',
    properties: {
      filter: { ...exprSchema, description: 'drop the event unless this expression is true (without it every event passes)' },
      meta: { type: 'object', additionalProperties: exprSchema, description: 'metadata variable -> expression' },
      set: { type: 'object', additionalProperties: exprSchema, description: 'dotted field path -> expression, patching the event data' },
      remove: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'dotted field paths removed from the event data' },
      route: { ...exprSchema, description: 'expression naming the output port (default out)' },
    },
  },
  validate: (config, nodeId) => void compileConfig(config, nodeId),
  create: (config, ctx) => celNode(config, ctx.nodeId),
};
