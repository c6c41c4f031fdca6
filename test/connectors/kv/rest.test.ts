import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';

/** A pipeline of one runtime::cel node. */
const celPipeline = (id: string, config: Record<string, unknown>) => ({
  id,
  interface: { inputs: ['in'], outputs: ['out'] },
  nodes: [{ id: 'cel', type: 'runtime::cel', config }],
  links: { in: ['cel'], cel: ['out'] },
});

describe('kv offramp over REST: file commands -> pipeline -> kv (linked) -> pipeline -> file', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-kv-rest-'));
  });
  afterEach(async () => {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a kv offramp without linked: true with 400', async () => {
    const reply = await call(rt.base, 'POST', '/offramp', { body: { id: 'store', type: 'kv', config: { dir: join(dir, 'kv') } } });
    expect(reply.status).to.equal(400);
    expect(JSON.stringify(reply.body)).to.match(/linked: the kv offramp works only as a linked transport/);
  });

  it('answers every command in order, carrying the correlation set in meta, with invalid commands on err; a bad dir is a 400 at activation', async () => {
    const commands = join(dir, 'commands.json');
    writeFileSync(
      commands,
      [
        { id: 'c1', put: { key: 'snot', value: 'badger' } },
        { id: 'c2', get: { key: 'snot' } },
        { id: 'c3', put: { key: 'snot', value: { n: 1 } } },
        { id: 'c4', cas: { key: 'snot', old: 'badger', new: 2 } },
        { id: 'c5', cas: { key: 'snot', old: { n: 1 }, new: 2 } },
        { id: 'c6', put: { key: 'other', value: true } },
        { id: 'c7', frobnicate: { key: 'snot' } },
        { id: 'c8', scan: { start: 'a' } },
        { id: 'c9', delete: { key: 'snot' } },
        { id: 'c10', get: { key: 'snot' } },
      ]
        .map((c) => JSON.stringify(c))
        .join('\n') + '\n',
    );
    const replies = join(dir, 'replies.json');
    const errors = join(dir, 'errors.json');
    const artefacts: [string, unknown][] = [
      ['onramp', { id: 'commands', type: 'file', config: { source: commands } }],
      // the command's id becomes the request's correlation, and leaves the command
      ['pipeline', celPipeline('tag', { meta: { correlation: 'event.id' }, remove: ['id'] })],
      ['offramp', { id: 'store', type: 'kv', linked: true, config: { dir: join(dir, 'kv') } }],
      // the reply's meta, written into its data so the file shows it
      ['pipeline', celPipeline('untag', { set: { correlation: 'meta.correlation', op: 'meta.kv.op' } })],
      ['pipeline', celPipeline('errtag', { set: { correlation: 'meta.correlation' } })],
      ['offramp', { id: 'replies', type: 'file', config: { file: replies } }],
      ['offramp', { id: 'errors', type: 'file', config: { file: errors } }],
      [
        'binding',
        {
          id: 'kvflow',
          links: {
            '/onramp/commands/{instance}/out': ['/pipeline/tag/{instance}/in'],
            '/pipeline/tag/{instance}/out': ['/offramp/store/{instance}/in'],
            '/offramp/store/{instance}/out': ['/pipeline/untag/{instance}/in'],
            '/offramp/store/{instance}/err': ['/pipeline/errtag/{instance}/in'],
            '/pipeline/untag/{instance}/out': ['/offramp/replies/{instance}/in'],
            '/pipeline/errtag/{instance}/out': ['/offramp/errors/{instance}/in'],
          },
        },
      ],
    ];
    for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    expect((await call(rt.base, 'POST', '/binding/kvflow/one')).status).to.equal(201);

    const read = (file: string) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l));
    await eventually(() => read(replies).length === 9 && read(errors).length === 1, 5000, 'nine replies and one error');
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    expect(read(replies)).to.deep.equal([
      { correlation: 'c1', op: 'put' },
      { ok: 'badger', correlation: 'c2', op: 'get' },
      { ok: 'badger', correlation: 'c3', op: 'put' },
      { error: { current: { n: 1 }, proposed: 2 }, correlation: 'c4', op: 'cas' },
      { ok: null, correlation: 'c5', op: 'cas' },
      { correlation: 'c6', op: 'put' },
      // keys are binary, which the json codec writes as base64
      {
        ok: [
          { key: b64('other'), value: true },
          { key: b64('snot'), value: 2 },
        ],
        correlation: 'c8',
        op: 'scan',
      },
      { ok: 2, correlation: 'c9', op: 'delete' },
      { correlation: 'c10', op: 'get' },
    ]);
    expect(read(errors)).to.deep.equal([
      { key: null, error: "Invalid KV command: unknown command 'frobnicate' (commands: get, put, delete, scan, cas)", correlation: 'c7' },
    ]);

    // a second instance on a dir that cannot be opened: the activation answers 400, naming the offramp
    await call(rt.base, 'POST', '/offramp', { body: { id: 'broken', type: 'kv', linked: true, config: { dir: join(commands, 'not-a-dir') } } });
    await call(rt.base, 'POST', '/binding', { body: { id: 'brokenflow', links: { '/offramp/broken/{instance}/out': ['/pipeline/untag/{instance}/in'] } } });
    const failed = await call(rt.base, 'POST', '/binding/brokenflow/one');
    expect(failed.status).to.equal(400);
    expect(JSON.stringify(failed.body)).to.match(/offramp 'broken' \(kv\) cannot start: kv: cannot open/);
  });
});
