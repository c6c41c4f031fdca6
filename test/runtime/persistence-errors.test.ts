/**
 * `eddy server run --data-dir` never starts on a store it cannot trust or
 * restore in full: it exits 1 with a message naming the directory and the
 * record or instance, and leaves the store as it was.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { runEddy } from '../helpers/cli';
import { freePort } from '../connectors/net-helpers';
import { created, killAll, startServer } from './persistence-server';

describe('persistence: a store eddy cannot use stops server run', function () {
  this.timeout(30000);
  let dir: string;
  let blocker: Server | undefined;

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-persist-errors-'))));
  afterEach(async () => {
    await killAll();
    if (blocker) await new Promise((r) => blocker!.close(r));
    blocker = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 1 naming a record that is not JSON, and a record of an unknown version', async () => {
    const db = new Level<string, string>(join(dir, 'state'), { valueEncoding: 'utf8' });
    await db.put('artefact!onramp!tick', '{"version":1,"kind":"onramp","artefact":{"id":"ti');
    await db.close();
    const broken = await runEddy(['server', 'run', '--no-api', '--data-dir', dir]);
    expect(broken.code).to.equal(1);
    expect(broken.stderr).to.contain(`error: --data-dir ${dir}: the store is corrupt: record 'artefact!onramp!tick': not valid JSON`);

    const db2 = new Level<string, string>(join(dir, 'state'), { valueEncoding: 'utf8' });
    await db2.put(
      'artefact!onramp!tick',
      JSON.stringify({ version: 9, kind: 'onramp', artefact: { id: 'tick', type: 'metronome', config: { interval: 50 } } }),
    );
    await db2.close();
    const newer = await runEddy(['server', 'run', '--no-api', '--data-dir', dir]);
    expect(newer.code).to.equal(1);
    expect(newer.stderr).to.contain(`record 'artefact!onramp!tick': version 9, but this eddy reads version 1 only`);
  });

  it('exits 1 when the store cannot be opened: another eddy holds it', async () => {
    await startServer(['--data-dir', dir]);
    const second = await runEddy(['server', 'run', '--no-api', '--data-dir', dir]);
    expect(second.code).to.equal(1);
    expect(second.stderr).to.match(/error: --data-dir .*: cannot open the store in .*state: IO error: lock .*\(is another eddy running with this data dir\?\)/);
  });

  it('exits 1 naming a stored instance that cannot be activated again (its port is taken)', async () => {
    const port = await freePort();
    const first = await startServer(['--data-dir', dir]);
    await created(first.base, '/onramp', { id: 'listener', type: 'tcp', config: { host: '127.0.0.1', port } });
    await created(first.base, '/binding', { id: 'ingest', links: { '/onramp/listener/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } });
    await created(first.base, '/binding/ingest/main');
    expect(await first.stop('SIGTERM')).to.equal(0);

    blocker = createServer();
    await new Promise<void>((r) => blocker!.listen(port, '127.0.0.1', r));
    const taken = await runEddy(['server', 'run', '--no-api', '--data-dir', dir]);
    expect(taken.code).to.equal(1);
    expect(taken.stderr).to.match(
      new RegExp(`error: --data-dir .*: the stored instance /binding/ingest/main cannot be activated again: .*EADDRINUSE.*${port}`),
    );
  });
});
