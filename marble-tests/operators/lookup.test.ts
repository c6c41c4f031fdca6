import { expect } from 'chai';
import type { TestScheduler } from 'rxjs/testing';
import type { Logger } from '../../src/core/logger';
import type { LookupTable, Refreshed, Row } from '../../src/pipeline/lookup/tables';
import { lookupNode, type LookupConfig } from '../../src/pipeline/operators/lookup';
import { ev, testContext, testScheduler } from './helpers';

/**
 * A table in virtual time: each refresh is noted with the virtual time it
 * began, and answers `takes` virtual ms later with the next of `loads` (the
 * rows it swaps in, or a failure). It answers through the scheduler with a
 * thenable, not a promise: virtual time runs synchronously, and a promise's
 * callback would run only after it.
 */
class VirtualTable implements LookupTable {
  rows: ReadonlyMap<string, Row> = new Map([['a', { k: 'a', v: '1' }]]);
  readonly loaded = true;
  readonly began: number[] = [];

  constructor(
    private readonly s: TestScheduler,
    private readonly takes: number,
    private readonly loads: (ReadonlyMap<string, Row> | Error)[] = [],
  ) {}

  refresh(): Promise<Refreshed> {
    this.began.push(this.s.now());
    const answer = (): Refreshed => {
      const next = this.loads.shift();
      if (next === undefined) return { kind: 'unchanged' };
      if (next instanceof Error) return { kind: 'failed', error: next, again: 'when the file changes' };
      this.rows = next;
      return { kind: 'loaded', rows: next.size, ms: this.takes, first: false, routine: false };
    };
    const thenable = { then: (done: (r: Refreshed) => void) => void this.s.schedule(() => done(answer()), this.takes) };
    return thenable as unknown as Promise<Refreshed>;
  }
}

const config = (checkEvery: number): LookupConfig => ({ table: { file: 'owners.csv', key: 'k', check_every: checkEvery }, key: 'event.k', into: 'r' });

/** A context whose log lines are noted with the virtual time they were written at. */
function loggingContext(s: TestScheduler) {
  const lines: string[] = [];
  const note = (level: string) => (m: string) => lines.push(`${s.now()} ${level} ${m}`);
  const logger: Logger = { debug: note('DEBUG'), info: note('INFO'), warn: note('WARN'), error: note('ERROR') };
  return { ctx: { ...testContext(s, 'owners'), logger }, lines };
}

describe('enrich::lookup (virtual time)', () => {
  it('checks the table every check_every on the scheduler, and events see the old rows until a load has ended, then the new ones', () => {
    const s = testScheduler();
    const { ctx, lines } = loggingContext(s);
    const table = new VirtualTable(s, 3, [new Map(), new Map([['a', { k: 'a', v: '2' }]])]);
    const a = ev(1, { k: 'a' });
    s.run(({ cold, expectObservable }) => {
      const node = lookupNode(config(10), ctx, table);
      // checks at 10 (loads an empty table at 13), 20 (the new row at 23), 30, 40
      expectObservable(node.apply(cold('-----a---------a---------a-|', { a })), '---------------------------------------------!').toBe(
        '-----A---------B---------C-|',
        {
          A: { port: 'out', event: { ...a, data: { k: 'a', r: { k: 'a', v: '1' } } } },
          B: { port: 'out', event: a },
          C: { port: 'out', event: { ...a, data: { k: 'a', r: { k: 'a', v: '2' } } } },
        },
      );
    });
    expect(table.began).to.deep.equal([10, 20]);
    expect(lines).to.deep.equal([
      '13 INFO enrich::lookup node owners: table reloaded from owners.csv: 0 rows in 3 ms',
      '23 INFO enrich::lookup node owners: table reloaded from owners.csv: 1 row in 3 ms',
    ]);
  });

  it('never begins a check while a load is under way (the checks due meanwhile pass), and logs a failed load', () => {
    const s = testScheduler();
    const { ctx, lines } = loggingContext(s);
    // each load takes 25: the checks due at 20 and 30 find one under way
    const table = new VirtualTable(s, 25, [new Error('owners.csv: line 2: a quoted field is not closed')]);
    s.run(({ cold, expectObservable }) => {
      expectObservable(lookupNode(config(10), ctx, table).apply(cold('-')), '^ 99ms !').toBe('-');
    });
    expect(table.began).to.deep.equal([10, 40, 70]);
    expect(lines).to.deep.equal([
      '35 WARN enrich::lookup node owners: the table was not (re)loaded, 1 row kept (tried again when the file changes): owners.csv: line 2: a quoted field is not closed',
    ]);
  });

  it('stops checking when unsubscribed, and reports nothing of a load that ends after', () => {
    const s = testScheduler();
    const { ctx, lines } = loggingContext(s);
    const table = new VirtualTable(s, 10, [new Map()]);
    s.run(({ cold, expectObservable }) => {
      expectObservable(lookupNode(config(10), ctx, table).apply(cold('-')), '^ 14ms !').toBe('-');
    });
    expect(table.began).to.deep.equal([10]);
    expect(lines).to.deep.equal([]);
  });
});
