/**
 * The store behind `--data-dir`, in-process: a Runtime with a LevelStore is
 * shut down and a new one opened on the same directory, which must come back
 * with what the first one had, and nothing a failed change attempted.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { LevelStore, StoreError, type RuntimeStore } from '../../src/runtime/store';
import { eventually } from '../helpers/runtime';

const PIPE = (id: string) => ({ id, interface: { inputs: ['in'], outputs: ['out'] }, nodes: [], links: { in: ['out'] } });

describe('persistence: the store of a runtime (--data-dir, in-process)', () => {
  let dir: string;
  let runtime: Runtime | undefined;

  const open = async (): Promise<Runtime> => {
    runtime = new Runtime({ logger: createLogger('silent'), store: await LevelStore.open(dir) });
    await runtime.start();
    return runtime;
  };
  const close = async () => {
    await runtime?.shutdown();
    runtime = undefined;
  };
  /** writes a raw record, as a damaged or foreign store would hold it */
  const putRaw = async (key: string, value: string) => {
    const db = new Level<string, string>(join(dir, 'state'), { valueEncoding: 'utf8' });
    await db.put(key, value);
    await db.close();
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-store-'));
  });
  afterEach(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps published artefacts (not the system ones) and directly activated instances with their parameters', async () => {
    const rt = await open();
    rt.publish('pipeline', PIPE('p'));
    rt.publish('onramp', { id: 'tick', type: 'metronome', config: { interval: 20 } });
    rt.publish('binding', { id: 'b', links: { '/onramp/tick/{instance}/out': ['/pipeline/p/{which}/in'] } });
    await rt.activate('binding', 'b', 'main', { which: 'shared' });
    await rt.persisted();
    await close();

    const again = await open();
    expect(again.list('pipeline')).to.have.members(['system::passthrough', 'system::metrics', 'p']);
    expect(again.list('binding')).to.deep.equal(['b']);
    expect(again.describe('binding', 'b').instances).to.deep.equal(['main']);
    // the parameters came back: the pipeline instance is the one {which} named
    expect(again.pipeline('/pipeline/p/shared')).to.not.equal(undefined);
    expect(again.store!.storedInstance('/binding/b/main')).to.deep.equal({ kind: 'binding', artefact: 'b', instance: 'main', params: { which: 'shared' } });
    // the stored parts run again, linked: ticks reach the pipeline
    let seen = 0;
    again
      .pipeline('/pipeline/p/shared')!
      .output('out')
      .subscribe(() => seen++);
    await eventually(() => seen > 0, 5000, 'a tick through the restored binding');
  });

  it('keeps deactivations and unpublishes', async () => {
    const rt = await open();
    rt.publish('pipeline', PIPE('p'));
    rt.publish('pipeline', PIPE('gone'));
    await rt.activate('pipeline', 'p', 'one');
    await rt.activate('pipeline', 'p', 'two');
    await rt.deactivate('pipeline', 'p', 'one');
    rt.unpublish('pipeline', 'gone');
    await rt.persisted();
    await close();

    const again = await open();
    expect(again.list('pipeline')).to.not.include('gone');
    expect(again.describe('pipeline', 'p').instances).to.deep.equal(['two']);
  });

  it('stores nothing for a failed publish or a failed activation', async () => {
    const rt = await open();
    expect(() => rt.publish('onramp', { id: 'bad', type: 'metronome', config: { interval: 'soon' } })).to.throw(/config.interval: 'soon' is not a duration/);
    rt.publish('onramp', { id: 'missing', type: 'file', config: { source: join(dir, 'no-such-file.json') } });
    rt.publish('pipeline', PIPE('p'));
    rt.publish('binding', { id: 'b', links: { '/onramp/missing/{instance}/out': ['/pipeline/p/{instance}/in'] } });
    let failure: Error | undefined;
    await rt.activate('binding', 'b', 'main').catch((err: unknown) => (failure = err as Error));
    expect(failure?.message).to.match(/no-such-file\.json/);
    await rt.persisted();
    await close();

    const again = await open();
    expect(again.list('onramp')).to.deep.equal(['missing']);
    expect(again.describe('binding', 'b').instances).to.deep.equal([]);
    expect(again.store!.storedInstance('/binding/b/main')).to.equal(undefined);
  });

  it('brings instances back in the order they were first activated: a direct pipeline instance before the binding that shares it', async () => {
    const rt = await open();
    rt.publish('pipeline', PIPE('p'));
    rt.publish('pipeline', PIPE('q'));
    rt.publish('binding', { id: 'b', links: { '/pipeline/q/{instance}/out': ['/pipeline/p/{instance}/in'] } });
    // activated first by itself, then shared by the binding; the other way round is refused (already running)
    await rt.activate('pipeline', 'p', 'main');
    await rt.activate('binding', 'b', 'main');
    await rt.persisted();
    await close();

    const again = await open();
    expect(again.describe('pipeline', 'p').instances).to.deep.equal(['main']);
    expect(again.describe('binding', 'b').instances).to.deep.equal(['main']);
    // still shared: the binding cannot take the direct instance away, and the direct one stays after the binding goes
    await again.deactivate('binding', 'b', 'main');
    expect(again.describe('pipeline', 'p').instances).to.deep.equal(['main']);
  });

  it('orders a store write after the changes asked for before it: publish, unpublish and publish again keeps the last', async () => {
    const rt = await open();
    rt.publish('pipeline', { ...PIPE('p'), description: 'first' });
    rt.unpublish('pipeline', 'p');
    rt.publish('pipeline', { ...PIPE('p'), description: 'last' });
    await rt.persisted();
    await close();

    const again = await open();
    expect((again.describe('pipeline', 'p').artefact as { description?: string }).description).to.equal('last');
  });

  it('refuses a record that is not JSON, naming it, and changes nothing', async () => {
    await putRaw('artefact!pipeline!p', '{"version": 1, "kind": "pipel');
    let err: Error | undefined;
    await LevelStore.open(dir).catch((e: unknown) => (err = e as Error));
    expect(err).to.be.instanceOf(StoreError);
    expect(err!.message).to.match(/the store is corrupt: record 'artefact!pipeline!p': not valid JSON/);
    // nothing was reset: the record is still there, as it was
    const db = new Level<string, string>(join(dir, 'state'), { valueEncoding: 'utf8' });
    expect(await db.get('artefact!pipeline!p')).to.equal('{"version": 1, "kind": "pipel');
    await db.close();
  });

  it('refuses a record of an unknown version, an unknown key and a record under the wrong key', async () => {
    await putRaw('artefact!pipeline!p', JSON.stringify({ version: 2, kind: 'pipeline', artefact: PIPE('p') }));
    let err: Error | undefined;
    await LevelStore.open(dir).catch((e: unknown) => (err = e as Error));
    expect(err?.message).to.match(/record 'artefact!pipeline!p': version 2, but this eddy reads version 1 only/);

    await putRaw('artefact!pipeline!p', JSON.stringify({ version: 1, kind: 'pipeline', artefact: PIPE('q') }));
    await LevelStore.open(dir).catch((e: unknown) => (err = e as Error));
    expect(err?.message).to.match(/record 'artefact!pipeline!p': holds pipeline "q", which belongs under another key/);

    await putRaw('artefact!pipeline!p', JSON.stringify({ version: 1, kind: 'pipeline', artefact: PIPE('p') }));
    await putRaw('settings', '{}');
    await LevelStore.open(dir).catch((e: unknown) => (err = e as Error));
    expect(err?.message).to.match(/record 'settings': not a record eddy writes/);
  });

  it('refuses a stored artefact that no longer validates, naming it', async () => {
    await putRaw('artefact!onramp!tick', JSON.stringify({ version: 1, kind: 'onramp', artefact: { id: 'tick', type: 'nosuchtype' } }));
    const store = await LevelStore.open(dir);
    runtime = new Runtime({ logger: createLogger('silent'), store });
    let err: Error | undefined;
    await runtime.start().catch((e: unknown) => (err = e as Error));
    expect(err?.message).to.match(/the stored onramp 'tick' \(record artefact!onramp!tick\) cannot be published again: type: unknown onramp 'nosuchtype'/);
  });

  it('refuses a store that cannot be opened: held by another runtime, or not a directory', async () => {
    const first = await LevelStore.open(dir);
    let err: Error | undefined;
    await LevelStore.open(dir).catch((e: unknown) => (err = e as Error));
    expect(err?.message).to.match(/cannot open the store in .*state: IO error: lock .*\(is another eddy running with this data dir\?\)/);
    await first.close();

    const file = join(dir, 'file');
    writeFileSync(file, 'not a directory');
    await LevelStore.open(file).catch((e: unknown) => (err = e as Error));
    expect(err?.message).to.match(/--data-dir .*file: cannot create .*state: (EEXIST|ENOTDIR)/);
  });

  it('a stored instance that cannot start again fails the start, naming the instance and the cause', async () => {
    const source = join(dir, 'in.json');
    writeFileSync(source, '{"n":1}\n');
    const rt = await open();
    rt.publish('onramp', { id: 'src', type: 'file', config: { source } });
    rt.publish('pipeline', PIPE('p'));
    rt.publish('binding', { id: 'b', links: { '/onramp/src/{instance}/out': ['/pipeline/p/{instance}/in'] } });
    await rt.activate('binding', 'b', 'main');
    await eventually(() => rt.onramp('/onramp/src/main')!.runtime.counters.out === 1, 3000, 'the line read');
    await rt.persisted();
    await close();
    rmSync(source);

    runtime = new Runtime({ logger: createLogger('silent'), store: await LevelStore.open(dir) });
    let err: Error | undefined;
    await runtime.start().catch((e: unknown) => (err = e as Error));
    expect(err?.message).to.match(/the stored instance \/binding\/b\/main cannot be activated again: .*in\.json/);
  });

  it('a store write that fails rejects persisted() and the activation, and asks the process to exit with status 1', async () => {
    const full = () => Promise.reject(new StoreError('--data-dir /full: cannot write the store: No space left on device'));
    const failing: RuntimeStore = {
      restore: async () => undefined,
      storedInstance: () => undefined,
      putArtefact: full,
      deleteArtefact: full,
      putInstance: full,
      deleteInstance: full,
      close: async () => undefined,
    };
    runtime = new Runtime({ logger: createLogger('silent'), store: failing });
    const exits: number[] = [];
    runtime.exitRequests.subscribe(({ code }) => exits.push(code));
    await runtime.start();
    runtime.publish('pipeline', PIPE('p'));
    const failureOf = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect((await failureOf(runtime.persisted()))?.message).to.equal('--data-dir /full: cannot write the store: No space left on device');
    expect(exits).to.deep.equal([1]);
    expect((await failureOf(runtime.activate('pipeline', 'p', 'main')))?.message).to.equal('--data-dir /full: cannot write the store: No space left on device');
  });
});
