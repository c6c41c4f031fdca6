import { Observable, type SchedulerLike, type Subscriber, type Subscription } from '../../core/rx';
import type * as CronParser from 'cron-parser';
import type { CronExpression } from 'cron-parser';
import { requirePackage } from '../../core/packages';
import type { Frame, OnrampContext, OnrampSource, OnrampType } from '../connector';
import { Years, nextInYears } from './years';
import { s } from '../../schema/typed';
import type { Static } from '../../schema/typed';

const { CronExpressionParser } = requirePackage<typeof CronParser>('cron-parser', 'the crononome onramp');

const entrySchema = s.object(
  {
    name: s.string({ minLength: 1, description: 'symbolic name, set as trigger.name on its events' }),
    expr: s.string({
      minLength: 1,
      description:
        'cron expression with six fields: second minute hour day-of-month month day-of-week (UTC; 0 or 7 is Sunday), and optionally a seventh: year (1970-2100; an entry whose years are past is ignored)',
    }),
    payload: s.unknown({ description: 'any value, set as trigger.payload on its events (absent when not given)' }),
  },
  { required: ['name', 'expr'] },
);

const configSchema = s.object(
  { entries: s.array(entrySchema, { minItems: 1, description: 'the schedules, each firing its own events' }) },
  { description: 'Emits an event each time the cron expression of one of its entries matches.', required: ['entries'] },
);

type Entry = Static<typeof entrySchema>;

/** A tick is fired while its second lasts; a timer later than that (a blocked event loop) skips it. */
const GRACE_MS = 1000;
/** Timers longer than this overflow Node's 32-bit timer delay; a far tick is reached in steps of at most this. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * crononome: a structured event for each tick of each entry's cron
 * expression (six fields with seconds, and an optional seventh, the year;
 * UTC). An entry with no time left when the instance is created (its years
 * are past) is ignored, with a warning naming it. Timers go through
 * `ctx.scheduler`, so virtual time drives it in tests. Ticks are never fired
 * late: a time that passed while paused or while the event loop was blocked
 * is skipped and the entry waits for its next time.
 */
export const crononome: OnrampType<Static<typeof configSchema>> = {
  name: 'crononome',
  defaultCodec: 'json',
  example: { entries: [{ name: 'every-5s', expr: '*/5 * * * * *', payload: { hello: 'world' } }] },
  configSchema,
  validate(config) {
    config.entries.forEach((entry, i) => parseExpr(entry.expr, `entries[${i}] (${entry.name})`));
  },
  create(config, ctx) {
    // every expression is checked before anything runs: a bad one fails the activation, naming the entry
    const parsed = config.entries.map((entry, i): Schedule => ({ entry, ...parseExpr(entry.expr, `entries[${i}] (${entry.name})`) }));
    return new CrononomeSource(ctx, upcoming(parsed, ctx));
  },
};

/** The spec: entries in the past are ignored; said once, here, rather than each time the entries are planned. */
function upcoming(parsed: Schedule[], ctx: OnrampContext): Schedule[] {
  const scheduler = ctx.scheduler;
  return parsed.filter((schedule) => {
    if (nextAfter(schedule, scheduler.now()) !== undefined) return true;
    const now = new Date(scheduler.now()).toISOString();
    ctx.logger.warn(
      `Onramp ${ctx.url}: crononome entry '${schedule.entry.name}' is ignored: '${schedule.entry.expr}' has no time after ${now}, it lies in the past`,
      {
        entry: schedule.entry.name,
      },
    );
    return false;
  });
}

/**
 * The source of one crononome onramp: while subscribed and not paused,
 * one timer per entry waiting for its next time (`plan`, `wait`), which
 * fires an event and plans the next (`fire`).
 */
class CrononomeSource implements OnrampSource {
  readonly frames: Observable<Frame>;
  private readonly originUri: string;
  private readonly scheduler: SchedulerLike;
  private subscriber: Subscriber<Frame> | undefined;
  private paused = false;
  /** the `id` of the next event */
  private id = 0;
  /** the pending timers, one per entry, all cancelled on pause and unsubscribe */
  private readonly timers = new Set<Subscription>();

  constructor(
    private readonly ctx: OnrampContext,
    private readonly schedules: Schedule[],
  ) {
    this.originUri = `svc-crononome://${ctx.hostname}`;
    this.scheduler = ctx.scheduler;
    this.frames = new Observable<Frame>((sub) => {
      this.subscriber = sub;
      if (!this.paused) this.start();
      return () => {
        this.cancelAll();
        this.subscriber = undefined;
      };
    });
  }

  // paused: no timers at all; resumed: each entry's next time from now, so the times that passed meanwhile are skipped
  pause(): void {
    this.paused = true;
    this.cancelAll();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.subscriber) this.start();
  }

  close(): void {
    this.cancelAll();
  }

  private cancelAll(): void {
    for (const timer of this.timers) timer.unsubscribe();
    this.timers.clear();
  }

  private start(): void {
    const now = this.scheduler.now();
    for (const schedule of this.schedules) this.plan(schedule, now);
  }

  /** Plans the schedule's first time strictly after `after`; one without an upcoming time is done. */
  private plan(schedule: Schedule, after: number): void {
    const next = nextAfter(schedule, after);
    if (next === undefined) this.ctx.logger.info(`Onramp ${this.ctx.url}: crononome entry '${schedule.entry.name}' has no upcoming time; it is done`);
    else this.wait(schedule, next);
  }

  /** Waits for `due`, in steps no longer than a Node timer can take. */
  private wait(schedule: Schedule, due: number): void {
    const delay = due - this.scheduler.now();
    const step = Math.min(Math.max(delay, 0), MAX_DELAY_MS);
    const timer = this.scheduler.schedule(() => {
      this.timers.delete(timer);
      if (step < delay) this.wait(schedule, due);
      else this.fire(schedule, due);
    }, step);
    this.timers.add(timer);
  }

  private fire(schedule: Schedule, due: number): void {
    const now = this.scheduler.now();
    if (now < due + GRACE_MS && this.subscriber) {
      const { name, payload } = schedule.entry;
      const ingestNs = BigInt(Math.trunc(now)) * 1_000_000n;
      const trigger = payload === undefined ? { name } : { name, payload };
      const value = { onramp: 'crononome', ingest_ns: ingestNs, id: this.id++, trigger };
      this.subscriber.next({ stream: 0, value, originUri: this.originUri, ingestNs });
    }
    // the next time after the one just handled, or after now if that one passed long ago: missed times are skipped
    this.plan(schedule, Math.max(now, due));
  }
}

interface Expression {
  /** the first six fields */
  readonly expression: CronExpression;
  /** the seventh field; undefined when the expression has six */
  readonly years?: Years;
}

interface Schedule extends Expression {
  readonly entry: Entry;
}

/** Parses one expression: six fields, or seven with the year, UTC; the error names the entry (and the year field when that is wrong). */
function parseExpr(expr: string, where: string): Expression {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 6 && fields.length !== 7) {
    throw new Error(
      `${where}: illegal expression '${expr}': expected six fields (second minute hour day-of-month month day-of-week) and an optional seventh (year), got ${fields.length}`,
    );
  }
  let years: Years | undefined;
  if (fields.length === 7) {
    try {
      years = Years.parse(fields[6]);
    } catch (err) {
      throw new Error(`${where}: illegal expression '${expr}': year field '${fields[6]}': ${(err as Error).message}`);
    }
  }
  try {
    return { expression: CronExpressionParser.parse(fields.slice(0, 6).join(' '), { tz: 'UTC' }), years };
  } catch (err) {
    throw new Error(`${where}: illegal expression '${expr}': ${(err as Error).message}`);
  }
}

/** The first time of the schedule strictly after `after` (ms since the epoch), or undefined when there is none. */
function nextAfter({ expression, years }: Expression, after: number): number | undefined {
  const next = (from: number): number | undefined => {
    expression.reset(new Date(from));
    try {
      return expression.next().getTime();
    } catch {
      return undefined;
    }
  };
  return years ? nextInYears(next, years, after) : next(after);
}
