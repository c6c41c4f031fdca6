import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { call, eventually, startRuntime, type Started } from '../helpers/runtime';

const RELAY = {
  id: 'relay',
  interface: { inputs: ['in'], outputs: ['out'] },
  nodes: [{ id: 'pass', type: 'passthrough' }],
  links: { in: ['pass'], pass: ['out'] },
};

/** The complete lines of a file (none when it does not exist). */
const linesOf = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1) : []);

async function publishAll(base: string, artefacts: [string, unknown][]): Promise<void> {
  for (const [kind, body] of artefacts) {
    const reply = await call(base, 'POST', `/${kind}`, { body });
    expect(reply.status, `${kind}: ${reply.text}`).to.equal(201);
  }
}

/** The instance URLs health lists, without the runtime's own system instances. */
async function userInstances(base: string): Promise<string[]> {
  const health = (await call(base, 'GET', '/health', { accept: 'application/json' })).body as { instances: { url: string }[] };
  return health.instances.map((i) => i.url).filter((url) => !url.includes('system'));
}

describe('activation over REST: changes are serialised', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-activation-'));
  });
  afterEach(async () => {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 20 parallel POST /binding/copy/one with one 201 and nineteen 409s, and delivers every event exactly once', async () => {
    const COUNT = 200;
    const source = join(dir, 'in.json');
    const target = join(dir, 'out.json');
    writeFileSync(source, Array.from({ length: COUNT }, (_, i) => `{"id":${i + 1}}\n`).join(''));
    await publishAll(rt.base, [
      ['onramp', { id: 'reader', type: 'file', config: { source } }],
      ['pipeline', RELAY],
      ['offramp', { id: 'writer', type: 'file', config: { file: target } }],
      [
        'binding',
        {
          id: 'copy',
          links: { '/onramp/reader/{instance}/out': ['/pipeline/relay/{instance}/in'], '/pipeline/relay/{instance}/out': ['/offramp/writer/{instance}/in'] },
        },
      ],
    ]);

    const replies = await Promise.all(Array.from({ length: 20 }, () => call(rt.base, 'POST', '/binding/copy/one', { accept: 'application/json' })));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([201, ...Array<number>(19).fill(409)]);
    for (const r of replies.filter((r) => r.status === 409))
      expect((r.body as { error: string }).error).to.equal('instance /binding/copy/one is already running');

    // every event passes the same wiring in order: once the last one is in the file, a second wiring's copies are too
    await eventually(() => linesOf(target).includes(`{"id":${COUNT}}`), 5000, 'the last event in the file');
    await rt.stop(); // closes the file after its pending writes
    const ids = linesOf(target).map((l) => (JSON.parse(l) as { id: number }).id);
    expect(ids).to.deep.equal(Array.from({ length: COUNT }, (_, i) => i + 1));
  });
});

describe('activation over REST: an artefact in use by an activation under way cannot be deleted', () => {
  let rt: Started;
  let opened: () => void = () => undefined;
  let creating = false;
  beforeEach(async () => {
    // an offramp whose opening waits until the test lets it finish
    const runtime = new Runtime({ logger: createLogger('silent') }).registerOfframp({
      name: 'gated',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: async () => {
        creating = true;
        await new Promise<void>((resolve) => (opened = resolve));
        return { send: () => undefined };
      },
    });
    rt = await startRuntime(runtime);
  });
  afterEach(async () => {
    opened();
    await rt.stop();
  });

  it('answers DELETE /offramp/slow with 409 while its instance opens, and the activation then completes with the artefact in place', async () => {
    const links = { '/pipeline/relay/{instance}/out': ['/offramp/slow/{instance}/in'] };
    await publishAll(rt.base, [
      ['pipeline', RELAY],
      ['offramp', { id: 'slow', type: 'gated' }],
      ['binding', { id: 'held', links }],
    ]);
    const activation = call(rt.base, 'POST', '/binding/held/one');
    await eventually(() => creating, 5000, 'the offramp opening');
    const deletion = await call(rt.base, 'DELETE', '/offramp/slow', { accept: 'application/json' });
    expect(deletion.status).to.equal(409);
    expect((deletion.body as { error: string }).error).to.equal("offramp 'slow' is in use by an activation under way");
    expect((await call(rt.base, 'DELETE', '/pipeline/relay')).status).to.equal(409);
    opened();
    expect((await activation).status).to.equal(201);
    expect((await call(rt.base, 'GET', '/offramp/slow', { accept: 'application/json' })).body)
      .to.have.property('instances')
      .that.deep.equals(['one']);
    // once nothing activates it, the usual rule: still running, so still 409, for that reason
    const later = await call(rt.base, 'DELETE', '/offramp/slow', { accept: 'application/json' });
    expect((later.body as { error: string }).error).to.equal("offramp 'slow' still has running instances: one");
  });
});

describe('activation over REST: a failed activation leaves nothing behind', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-activation-'));
  });
  afterEach(async () => {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A binding writing to three files: `kept` exists with content, `fresh`
   * does not exist yet, and `bad` is in a directory that does not exist.
   * The good offramps come first in the links, so they are opened before the
   * bad one fails.
   */
  async function publishFanOut(extra: [string, unknown][] = [], source?: string): Promise<{ kept: string; fresh: string; bad: string }> {
    const kept = join(dir, 'kept.json');
    const fresh = join(dir, 'fresh.json');
    const bad = join(dir, 'missing', 'bad.json');
    writeFileSync(kept, 'precious\n');
    const input = source ?? join(dir, 'in.json');
    if (source === undefined) writeFileSync(input, '{"id":1}\n');
    await publishAll(rt.base, [
      ['onramp', { id: 'reader', type: 'file', config: { source: input } }],
      ['pipeline', RELAY],
      ['offramp', { id: 'kept', type: 'file', config: { file: kept } }],
      ['offramp', { id: 'fresh', type: 'file', config: { file: fresh } }],
      ...extra,
    ]);
    return { kept, fresh, bad };
  }

  const fanOut = (sinks: string[]) => ({
    id: 'fan',
    links: {
      '/onramp/reader/{instance}/out': ['/pipeline/relay/{instance}/in'],
      '/pipeline/relay/{instance}/out': sinks.map((s) => `/offramp/${s}/{instance}/in`),
    },
  });

  it('an offramp whose directory is missing answers 400 naming it; the other offramps neither truncated nor created their files', async () => {
    const { kept, fresh, bad } = await publishFanOut([['offramp', { id: 'broken', type: 'file', config: { file: join(dir, 'missing', 'bad.json') } }]]);
    await publishAll(rt.base, [['binding', fanOut(['kept', 'fresh', 'broken'])]]);

    const reply = await call(rt.base, 'POST', '/binding/fan/one', { accept: 'application/json' });
    expect(reply.status, reply.text).to.equal(400);
    expect((reply.body as { error: string }).error).to.equal(
      `offramp 'broken' (file) cannot start: file offramp: cannot open ${bad}: directory ${join(dir, 'missing')} does not exist`,
    );
    expect(readFileSync(kept, 'utf8')).to.equal('precious\n');
    expect(existsSync(fresh)).to.equal(false);
    expect(await userInstances(rt.base)).to.deep.equal([]);
    for (const id of ['kept', 'fresh', 'broken']) {
      expect((await call(rt.base, 'GET', `/offramp/${id}`, { accept: 'application/json' })).body)
        .to.have.property('instances')
        .that.deep.equals([]);
    }
    expect((await call(rt.base, 'GET', '/binding/fan', { accept: 'application/json' })).body)
      .to.have.property('instances')
      .that.deep.equals([]);

    // the same binding works once the directory is there, and then truncates and creates
    rmSync(join(dir, 'missing'), { recursive: true, force: true });
    await call(rt.base, 'DELETE', '/binding/fan');
    await publishAll(rt.base, [['binding', fanOut(['kept', 'fresh'])]]);
    expect((await call(rt.base, 'POST', '/binding/fan/one')).status).to.equal(201);
    await eventually(() => linesOf(kept).length === 1 && linesOf(fresh).length === 1, 5000, 'the event in both files');
    expect(readFileSync(kept, 'utf8')).to.equal('{"id":1}\n');
  });

  it('an onramp that cannot open its source fails the activation after the offramps opened: no file touched, nothing running', async () => {
    const { kept, fresh } = await publishFanOut([], join(dir, 'no-such-input.json'));
    await publishAll(rt.base, [['binding', fanOut(['kept', 'fresh'])]]);

    const reply = await call(rt.base, 'POST', '/binding/fan/one', { accept: 'application/json' });
    expect(reply.status, reply.text).to.equal(400);
    expect((reply.body as { error: string }).error).to.match(/^onramp 'reader' \(file\) cannot start: .*ENOENT/);
    expect(readFileSync(kept, 'utf8')).to.equal('precious\n');
    expect(existsSync(fresh)).to.equal(false);
    expect(await userInstances(rt.base)).to.deep.equal([]);
  });

  it('a file offramp activated by itself in a missing directory answers 400 and is not left running', async () => {
    const file = join(dir, 'missing', 'out.json');
    await publishAll(rt.base, [['offramp', { id: 'alone', type: 'file', config: { file } }]]);
    const reply = await call(rt.base, 'POST', '/offramp/alone/one', { accept: 'application/json' });
    expect(reply.status).to.equal(400);
    expect((reply.body as { error: string }).error).to.equal(
      `offramp 'alone' (file) cannot start: file offramp: cannot open ${file}: directory ${join(dir, 'missing')} does not exist`,
    );
    expect(await userInstances(rt.base)).to.deep.equal([]);
    // and a path that is a directory is refused as well, naming the cause
    await publishAll(rt.base, [['offramp', { id: 'dir', type: 'file', config: { file: dir } }]]);
    const onDir = await call(rt.base, 'POST', '/offramp/dir/one', { accept: 'application/json' });
    expect(onDir.status).to.equal(400);
    expect((onDir.body as { error: string }).error).to.match(/^offramp 'dir' \(file\) cannot start: file offramp: cannot open .*: EISDIR/);
  });

  it('a link naming a pipeline output that does not exist answers 400 before any offramp opens: the files keep their data', async () => {
    const { kept, fresh } = await publishFanOut();
    const links = { ...fanOut(['kept', 'fresh']).links, '/pipeline/relay/{instance}/dupz': ['/offramp/kept/{instance}/in'] };
    await publishAll(rt.base, [['binding', { id: 'fan', links }]]);
    const reply = await call(rt.base, 'POST', '/binding/fan/one', { accept: 'application/json' });
    expect(reply.status, reply.text).to.equal(400);
    expect((reply.body as { error: string }).error).to.equal(
      "link /pipeline/relay/one/dupz -> /offramp/kept/one/in: pipeline has no output 'dupz' (outputs: out, err)",
    );
    expect(readFileSync(kept, 'utf8')).to.equal('precious\n');
    expect(existsSync(fresh)).to.equal(false);
    expect(await userInstances(rt.base)).to.deep.equal([]);
  });

  for (const [what, link, error] of [
    ['a pipeline input', ['/onramp/reader/{instance}/out', '/pipeline/relay/{instance}/inz'], "pipeline has no input 'inz' (inputs: in)"],
    ['an onramp port', ['/onramp/reader/{instance}/errz', '/pipeline/relay/{instance}/in'], 'an onramp has ports out and err'],
    ['an offramp port', ['/pipeline/relay/{instance}/out', '/offramp/kept/{instance}/inn'], 'an offramp receives on port in'],
    ['a kind pair', ['/onramp/reader/{instance}/out', '/offramp/kept/{instance}/in'], 'an onramp cannot be linked to an offramp'],
    ['an artefact', ['/pipeline/relay/{instance}/out', '/offramp/nosuch/{instance}/in'], "offramp 'nosuch' not found"],
  ] as const) {
    it(`a link naming ${what} that cannot be wired answers before anything opens: the files keep their data`, async () => {
      const { kept, fresh } = await publishFanOut();
      const links = { ...fanOut(['kept', 'fresh']).links, [link[0]]: [link[1]] };
      await publishAll(rt.base, [['binding', { id: 'fan', links }]]);
      const reply = await call(rt.base, 'POST', '/binding/fan/one', { accept: 'application/json' });
      expect(reply.status, reply.text).to.be.oneOf([400, 404]);
      expect((reply.body as { error: string }).error).to.include(error);
      expect(readFileSync(kept, 'utf8')).to.equal('precious\n');
      expect(existsSync(fresh)).to.equal(false);
      expect(await userInstances(rt.base)).to.deep.equal([]);
    });
  }

  it('a port already in use fails the activation after the offramps opened: the files keep their data', async () => {
    const { kept, fresh } = await publishFanOut();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      await publishAll(rt.base, [
        ['onramp', { id: 'web', type: 'rest', config: { host: '127.0.0.1', port } }],
        ['binding', { id: 'fan', links: { ...fanOut(['kept', 'fresh']).links, '/onramp/web/{instance}/out': ['/pipeline/relay/{instance}/in'] } }],
      ]);
      const reply = await call(rt.base, 'POST', '/binding/fan/one', { accept: 'application/json' });
      expect(reply.status, reply.text).to.equal(400);
      expect((reply.body as { error: string }).error).to.match(/^onramp 'web' \(rest\) cannot start: .*EADDRINUSE/);
    } finally {
      taken.close();
    }
    expect(readFileSync(kept, 'utf8')).to.equal('precious\n');
    expect(existsSync(fresh)).to.equal(false);
    expect(await userInstances(rt.base)).to.deep.equal([]);
  });

  it('a kv offramp of a failed activation removes the store directory it made', async () => {
    const store = join(dir, 'kv', 'store');
    await publishFanOut([
      ['offramp', { id: 'store', type: 'kv', linked: true, config: { dir: store } }],
      ['offramp', { id: 'broken', type: 'file', config: { file: join(dir, 'missing', 'bad.json') } }],
    ]);
    await publishAll(rt.base, [['binding', fanOut(['store', 'broken'])]]);
    expect((await call(rt.base, 'POST', '/binding/fan/one')).status).to.equal(400);
    expect(existsSync(join(dir, 'kv'))).to.equal(false);
    expect(await userInstances(rt.base)).to.deep.equal([]);
  });
});
