import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { runExample, type EddyProcess } from '../example-runner';
import { sql, uniqueName } from './helpers';

const EXAMPLE = join(__dirname, '../../../../examples/postgres.yaml');

describe('examples/postgres.yaml (real server)', function () {
  this.timeout(40_000);
  let pg: ServiceAddress;
  let db: Client;
  let eddy: EddyProcess | undefined;
  let table: string;
  let dir: string;

  before(async function () {
    pg = await requireService(this, 'postgres');
    db = await sql(pg);
  });
  after(async () => db?.end());
  afterEach(async () => {
    await eddy?.stop();
    eddy = undefined;
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs: ticks written as rows by the offramp come back from the table through the poller', async () => {
    // the example as written, with its table and cache made unique to this run
    table = uniqueName('eddy_example_ticks');
    dir = mkdtempSync(join(tmpdir(), 'eddy-pg-example-'));
    const text = readFileSync(EXAMPLE, 'utf8').replaceAll('eddy_example_ticks', table).replace('/tmp/eddy-postgres-example.cache', join(dir, 'example.cache'));
    expect(text).to.not.equal(readFileSync(EXAMPLE, 'utf8'));
    const file = join(dir, 'postgres.yaml');
    writeFileSync(file, text);
    // the CREATE TABLE of the example's comment
    const create = /psql .* -c "(CREATE TABLE [^"]+)"/.exec(text.replace(/\n#\s+/g, ' '));
    expect(create, 'the CREATE TABLE in the comment').to.not.equal(null);
    await db.query(create![1]);

    eddy = runExample(file);
    const rows = () => eddy!.events() as { tick?: { fieldType: string; value: number }; ticked_at?: { fieldType: string; value: string } }[];
    await eventually(() => rows().length >= 2, 30_000, 'two rows polled back');
    const [first, second] = rows();
    expect(first.tick).to.include({ fieldType: 'INT8', value: 0 });
    expect(second.tick).to.include({ fieldType: 'INT8', value: 1 });
    expect(first.ticked_at?.fieldType).to.equal('TIMESTAMPTZ');
    expect(first.ticked_at?.value).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    expect(await eddy.stop()).to.equal(0);
    eddy = undefined;
  });
});
