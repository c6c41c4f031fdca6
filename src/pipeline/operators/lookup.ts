import { Observable, type Subscriber, type Subscription } from '../../core/rx';
import type { EddyEvent, PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import { checkInstalled } from '../../core/packages';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { FileTable, PostgresTable, keyOf, postgresTableSchema } from '../lookup/tables';
import { durationMs, durationSchema } from '../../schema/duration';
import { EventScope, compileEventExpression, type EventExpression } from '../window/expressions';
import { setPath } from './cel';
import { nodeUrl, withError } from './support';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    table: s.oneOf(
      [
        s.object(
          {
            file: s.string({ minLength: 1, description: 'a .csv file (a header line names the columns) or JSON lines (one object per line)' }),
            key: s.string({ minLength: 1, description: 'the key column' }),
            check_every: durationSchema('how often the file is checked for a change (default 1s)'),
          },
          { required: ['file', 'key'] },
        ),
        s.object(
          { postgres: postgresTableSchema, key: s.string({ minLength: 1, description: 'the key column of the query' }) },
          { required: ['postgres', 'key'] },
        ),
      ],
      { description: '{file, key} or {postgres: {...}, key}: where the rows come from and their key column' },
    ),
    key: s.string({ minLength: 1, description: 'CEL: the value looked up, e.g. event.host' }),
    into: s.string({ minLength: 1, description: 'where the row goes: a dotted field path, or meta.<name>' }),
    on_miss: s.literals(['pass', 'drop', 'port'], {
      description: 'a key not in the table: pass unchanged (default), drop (acked), or leave on port miss',
    }),
  },
  {
    description: 'Joins each event with a row of a table (a CSV or JSON-lines file, or a PostgreSQL query) by key.',
    required: ['table', 'key', 'into'],
  },
);

export type LookupConfig = Input<typeof configSchema>;

interface Plan {
  readonly key: EventExpression;
  readonly into: { readonly meta: boolean; readonly path: readonly string[] };
  readonly onMiss: 'pass' | 'drop' | 'port';
  readonly every: number;
}

function compile(config: LookupConfig, nodeId: string): Plan {
  const where = `enrich::lookup node ${nodeId}`;
  let key: EventExpression;
  try {
    key = compileEventExpression(config.key);
  } catch (err) {
    throw invalid(`${where}: key: ${(err as Error).message}`);
  }
  const parts = config.into.split('.');
  if (parts.some((p) => p === '')) throw invalid(`${where}: into: empty segment in path ${JSON.stringify(config.into)}`);
  const meta = parts[0] === 'meta' && parts.length > 1;
  if ('postgres' in config.table) checkInstalled('pg', `${where}: table.postgres`);
  let every: number;
  try {
    every =
      'postgres' in config.table
        ? durationMs(config.table.postgres.refresh ?? '30s', 'table.postgres.refresh')
        : durationMs(config.table.check_every ?? '1s', 'table.check_every');
  } catch (err) {
    throw invalid(`${where}: ${(err as Error).message}`);
  }
  return { key, into: { meta, path: meta ? parts.slice(1) : parts }, onMiss: config.on_miss ?? 'pass', every };
}

/**
 * Joins each event with a table row by key. A file table is read when the
 * node is made (a missing or broken file fails the activation) and reloaded
 * when the file changes; a PostgreSQL table holds the sources back (a
 * circuit-breaker trigger) until its query has answered once, then runs
 * again every `refresh`. A reload that fails keeps the rows it had, logged.
 */
export function lookupNode(config: LookupConfig, ctx: OperatorContext): OperatorNode {
  const plan = compile(config, ctx.nodeId);
  const where = `enrich::lookup node ${ctx.nodeId}`;
  const table = 'postgres' in config.table ? new PostgresTable(config.table.postgres, config.table.key) : loadFile(config.table.file, config.table.key, where);
  const from = nodeUrl(ctx);

  const enrich = (event: EddyEvent, out: Subscriber<PortEvent>) => {
    let row;
    try {
      row = table.rows.get(keyOf(plan.key.evaluate(new EventScope(event))));
    } catch (err) {
      out.next({ port: 'err', event: withError(event, `${where}: key: ${(err as Error).message}`) });
      return;
    }
    if (row !== undefined) {
      const enriched = plan.into.meta
        ? { ...event, meta: setPath(event.meta, plan.into.path, row) as Record<string, unknown> }
        : { ...event, data: setPath(event.data, plan.into.path, row) };
      out.next({ port: 'out', event: enriched });
    } else if (plan.onMiss === 'pass') out.next({ port: 'out', event });
    else if (plan.onMiss === 'port') out.next({ port: 'miss', event });
    // on_miss: drop is a rule of the config: the pipeline counts the event as dropped `miss` and acks it
    else if (ctx.drop) ctx.drop(event, 'miss');
    else if (event.transactional) ctx.insight({ kind: 'ack', event, from });
  };

  return {
    ports: ['miss', 'err'],
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        let timer: Subscription | undefined;
        let stopped = false;
        // events that came before a database table first loaded (sources are held back meanwhile)
        let waiting: EddyEvent[] | undefined;
        const refresh = async () => {
          const failed = await table.refresh();
          if (stopped) return;
          if (failed)
            ctx.logger?.warn(`${where}: the table was not (re)loaded, ${table.rows.size} row${table.rows.size === 1 ? '' : 's'} kept: ${failed.message}`);
          if (waiting && table instanceof PostgresTable && table.loaded) {
            const held = waiting;
            waiting = undefined;
            for (const e of held) enrich(e, subscriber);
            ctx.insight({ kind: 'restore', from });
          }
          timer = ctx.scheduler.schedule(() => void refresh(), waiting ? Math.min(plan.every, 1000) : plan.every);
        };
        if (table instanceof PostgresTable && !table.loaded) {
          waiting = [];
          ctx.insight({ kind: 'trigger', from });
          void refresh();
        } else timer = ctx.scheduler.schedule(() => void refresh(), plan.every);
        const sub = input.subscribe({
          next: (event) => (waiting ? waiting.push(event) : enrich(event, subscriber)),
          error: (err: unknown) => subscriber.error(err),
          complete: () => {
            // still not loaded: what waits is sent on as a miss would be, so nothing is lost
            for (const e of waiting ?? []) enrich(e, subscriber);
            waiting = undefined;
            subscriber.complete();
          },
        });
        return () => {
          stopped = true;
          timer?.unsubscribe();
          sub.unsubscribe();
        };
      }),
  };
}

function loadFile(file: string, key: string, where: string): FileTable {
  try {
    return new FileTable(file, key);
  } catch (err) {
    throw invalid(`${where}: table.file: ${(err as Error).message}`);
  }
}

/** enrich::lookup */
export const lookup: OperatorType<LookupConfig> = {
  name: 'enrich::lookup',
  outputPorts: (config) => (config.on_miss === 'port' ? ['miss', 'err'] : ['err']),
  configSchema,
  validate: (config, nodeId) => void compile(config, nodeId),
  create: (config, ctx) => lookupNode(config, ctx),
};
