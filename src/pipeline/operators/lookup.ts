import { Observable, type SchedulerLike, type Subscriber, type Subscription } from '../../core/rx';
import type { EddyEvent, PortEvent } from '../../core/event';
import { invalid } from '../../core/errors';
import { checkInstalled } from '../../core/packages';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { PostgresTable, keyOf, postgresTableSchema, type LookupTable, type Refreshed } from '../lookup/tables';
import { FileTable, csvDelimiter } from '../lookup/file-table';
import { delimiterProblem } from '../lookup/csv';
import { durationMs, duration } from '../../schema/duration';
import { EventScope, compileEventExpression, type EventExpression } from '../window/expressions';
import { setPath } from './cel';
import { nodeUrl, withError } from './_shared/support';
import { s } from '../../schema/typed';
import type { Input } from '../../schema/typed';

const configSchema = s.object(
  {
    table: s.oneOf(
      [
        s.object(
          {
            file: s.string({
              path: 'read',
              minLength: 1,
              description: 'a .csv (or .tsv) file, a header line naming the columns, or JSON lines (one object per line, any other extension)',
            }),
            key: s.string({ minLength: 1, description: 'the key column' }),
            check_every: duration('how often the file is checked for a change (default 1s)'),
            delimiter: s.string({
              minLength: 1,
              maxLength: 1,
              description: "a CSV file's field delimiter, one character: `,` (the default), `;`, a tab, `|`, ... (a .tsv file's default is a tab)",
            }),
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
  if ('file' in config.table && config.table.delimiter !== undefined) {
    const problem = delimiterProblem(config.table.delimiter);
    if (problem) throw invalid(`${where}: table.delimiter ${problem}`);
    if (csvDelimiter(config.table.file, config.table.delimiter) === undefined)
      throw invalid(`${where}: table.delimiter: ${JSON.stringify(config.table.file)} is read as JSON lines (only a .csv or .tsv file has a delimiter)`);
  }
  return { key, into: { meta, path: meta ? parts.slice(1) : parts }, onMiss: config.on_miss ?? 'pass', every };
}

/**
 * Joins each event with a table row by key. A file table is read when the
 * node is made (a missing or broken file fails the activation) and reloaded
 * when the file changes; a PostgreSQL table holds the sources back (a
 * circuit-breaker trigger) until its query has answered once, then runs
 * again every `refresh`. A reload that fails keeps the rows it had, logged
 * (a file: once per version of it). `table` is given by tests.
 */
/** A node's ports besides `out`: `miss` only when the config sends misses there. */
function lookupPorts(config: LookupConfig): string[] {
  return config.on_miss === 'port' ? ['miss', 'err'] : ['err'];
}

export function lookupNode(config: LookupConfig, ctx: OperatorContext, given?: LookupTable): OperatorNode {
  const plan = compile(config, ctx.nodeId);
  const table = given ?? makeTable(config, ctx.nodeId);
  const where = `enrich::lookup node ${ctx.nodeId}`;
  const from = nodeUrl(ctx);
  const source = 'file' in config.table ? `from ${config.table.file}` : 'from its query';

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

  const report = (result: Refreshed) => {
    const rows = (n: number) => `${n} row${n === 1 ? '' : 's'}`;
    if (result.kind === 'failed') {
      ctx.logger?.warn(`${where}: the table was not (re)loaded, ${rows(table.rows.size)} kept (tried again ${result.again}): ${result.error.message}`);
    } else if (result.kind === 'loaded') {
      // a database table refreshes every interval: only its first answer is news
      const line = `${where}: table ${result.first ? 'loaded' : 'reloaded'} ${source}: ${rows(result.rows)} in ${Math.round(result.ms)} ms`;
      if (result.routine) ctx.logger?.debug(line);
      else ctx.logger?.info(line);
    }
  };

  return {
    ports: lookupPorts(config),
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        // events that came before a database table first loaded (sources are held back meanwhile)
        let waiting: EddyEvent[] | undefined;
        const refreshed = (result: Refreshed) => {
          report(result);
          if (waiting && table.loaded) {
            const held = waiting;
            waiting = undefined;
            for (const e of held) enrich(e, subscriber);
            ctx.insight({ kind: 'restore', from });
          }
        };
        // until the first answer, a database table is asked again every second at most
        const checks = new Checks(ctx.scheduler, table, () => (waiting ? Math.min(plan.every, 1000) : plan.every), refreshed);
        if (!table.loaded) {
          waiting = [];
          ctx.insight({ kind: 'trigger', from });
          checks.start(true);
        } else checks.start(false);
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
          checks.stop();
          sub.unsubscribe();
        };
      }),
  };
}

/**
 * The table's refresh on the scheduler (so virtual time drives it in marble
 * tests): a check every interval, never two at once (a load that takes
 * longer than the interval makes the checks meanwhile pass), its result
 * reported unless the node has stopped since.
 */
class Checks {
  private timer: Subscription | undefined;
  private busy = false;
  private stopped = false;
  /** stops a load under way when the node stops */
  private readonly abort = new AbortController();

  constructor(
    private readonly scheduler: SchedulerLike,
    private readonly table: LookupTable,
    private readonly interval: () => number,
    private readonly report: (result: Refreshed) => void,
  ) {}

  /** Checks every interval from now; `now`: the first check at once too. */
  start(now: boolean): void {
    if (now) this.check();
    this.next();
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.timer?.unsubscribe();
  }

  private next(): void {
    if (!this.stopped) this.timer = this.scheduler.schedule(() => this.tick(), this.interval());
  }

  private tick(): void {
    this.next();
    if (!this.busy) this.check();
  }

  private check(): void {
    this.busy = true;
    this.table.refresh(this.abort.signal).then(
      (result) => this.done(result),
      (err: unknown) => this.done({ kind: 'failed', error: err instanceof Error ? err : new Error(String(err)), again: 'at the next check' }),
    );
  }

  private done(result: Refreshed): void {
    this.busy = false;
    if (!this.stopped) this.report(result);
  }
}

function makeTable(config: LookupConfig, nodeId: string): LookupTable {
  if ('postgres' in config.table) return new PostgresTable(config.table.postgres, config.table.key);
  try {
    return new FileTable(config.table.file, config.table.key, { delimiter: config.table.delimiter });
  } catch (err) {
    throw invalid(`enrich::lookup node ${nodeId}: table.file: ${(err as Error).message}`);
  }
}

/** enrich::lookup */
export const lookup: OperatorType<LookupConfig> = {
  name: 'enrich::lookup',
  examples: [
    { table: { file: 'owners.jsonl', key: 'host' }, key: 'event.host', into: 'owner' },
    { table: { file: 'owners.jsonl', key: 'host' }, key: 'event.host', into: 'owner', on_miss: 'port' },
  ],
  outputPorts: lookupPorts,
  configSchema,
  validate: (config, nodeId) => void compile(config, nodeId),
  create: (config, ctx) => lookupNode(config, ctx),
};
