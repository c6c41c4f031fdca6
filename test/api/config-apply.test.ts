import Ajv2020 from 'ajv/dist/2020';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createLogger } from '../../src/core/logger';
import { SerialQueue } from '../../src/core/serial-queue';
import { PathPolicy } from '../../src/runtime/policy';
import { Runtime } from '../../src/runtime/runtime';
import { LevelStore } from '../../src/runtime/store';
import { completeLines } from '../helpers/lines';
import { call, eventually, startRuntime, type Reply, type Started } from '../helpers/runtime';

/**
 * POST /config: a whole config document applied all or nothing, by the code
 * `eddy server run -f` loads files with (docs/rest-api.md, "A whole config").
 */
describe('POST /config: a whole config, all or nothing', function () {
  this.timeout(30000);
  let dir: string;
  let api: Started;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-config-apply-'));
  });
  afterEach(async () => {
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A file onramp reading `name`'s input (one line) and a file offramp writing its output (which holds a line already). */
  function files(name: string): { input: string; output: string } {
    const input = join(dir, `in-${name}.json`);
    const output = join(dir, `out-${name}.json`);
    writeFileSync(input, `{"from":"${name}"}\n`);
    writeFileSync(output, 'precious\n');
    return { input, output };
  }

  type Doc = Record<string, unknown[]>;

  /** A flow `name` as a config document: its onramp, its offramp, and a `flow` entry (through a pipeline of its own with `via`) joining them. */
  function flowDoc(name: string, options: { via?: boolean; input?: string } = {}): Doc {
    const { input, output } = files(name);
    return {
      ...(options.via ? { pipeline: [{ id: `${name}_p`, nodes: [{ id: 'pass', type: 'passthrough' }] }] } : {}),
      onramp: [{ id: `${name}_in`, type: 'file', config: { source: options.input ?? input } }],
      offramp: [{ id: `${name}_out`, type: 'file', config: { file: output } }],
      flow: [{ id: name, from: `${name}_in`, ...(options.via ? { via: `${name}_p` } : {}), to: `${name}_out` }],
    };
  }

  /** One document holding every section of each: what a config file of several flows looks like. */
  function merged(...docs: Doc[]): Doc {
    const all: Doc = {};
    for (const doc of docs) for (const [section, list] of Object.entries(doc)) all[section] = [...(all[section] ?? []), ...list];
    return all;
  }

  const flowYaml = (name: string, options: { via?: boolean } = {}): string => stringify(flowDoc(name, options));

  const apply = (yaml: string, query = ''): Promise<Reply> => call(api.base, 'POST', `/config${query}`, { raw: yaml, contentType: 'application/yaml' });
  const error = (reply: Reply) => (reply.body as { error: string }).error;

  /** Every artefact id of every kind and every running instance: what a refused apply must leave as it was. */
  async function state(): Promise<unknown> {
    const all: Record<string, unknown> = {};
    for (const kind of ['pipeline', 'onramp', 'offramp', 'binding'] as const) {
      const ids = (await call(api.base, 'GET', `/${kind}`)).body as string[];
      all[kind] = Object.fromEntries(ids.map((id) => [id, api.runtime.instancesOf(kind, id)]));
    }
    return all;
  }

  it('publishes and activates a flow section: 201 says what, and the events reach the output file', async () => {
    api = await startRuntime();
    const reply = await apply(flowYaml('one', { via: true }));
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.body).to.deep.equal({
      dry_run: false,
      published: [
        { kind: 'pipeline', id: 'one_p' },
        { kind: 'offramp', id: 'one_out' },
        { kind: 'onramp', id: 'one_in' },
        { kind: 'binding', id: 'one' },
      ],
      activated: ['/binding/one/main'],
      unchanged: [],
      running: [],
    });
    const output = join(dir, 'out-one.json');
    await eventually(() => completeLines(output).length > 0, 10000, 'the event in the output file');
    expect(completeLines(output)).to.deep.equal(['{"from":"one"}']);
    expect((await call(api.base, 'GET', '/binding/one')).body)
      .to.have.property('instances')
      .that.deep.equals(['main']);
  });

  it('takes JSON too', async () => {
    api = await startRuntime();
    const reply = await call(api.base, 'POST', '/config', { body: { pipeline: [{ id: 'p', nodes: [{ id: 'pass', type: 'passthrough' }] }] } });
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.body)
      .to.have.property('published')
      .that.deep.equals([{ kind: 'pipeline', id: 'p' }]);
  });

  it('answers with the schema its OpenAPI document gives (and the document names the operation)', async () => {
    api = await startRuntime();
    const doc = (await call(api.base, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> }>>;
      components: unknown;
    };
    const post = doc.paths['/config'].post;
    expect(post.operationId).to.equal('apply_config');
    expect(Object.keys(post.responses).sort()).to.deep.equal(['200', '201', '400', '403', '406', '409', '413', '415', '503']);
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ components: doc.components }, 'doc');
    const validate = ajv.getSchema(`doc${post.responses['201'].content['application/json'].schema.$ref}`)!;
    const reply = await apply(flowYaml('one'));
    expect(reply.status, reply.text).to.equal(201);
    expect(validate(reply.body), JSON.stringify(validate.errors)).to.equal(true);
    const body = ajv.getSchema('doc#/components/schemas/config')!;
    expect(body({ onramp: [], flow: [{ id: 'f', from: 'a', to: ['b'] }], mapping: { '/binding/f/main': {} } }), JSON.stringify(body.errors)).to.equal(true);
    expect(body({ onramps: [] })).to.equal(false);
  });

  it('refuses a later mapping that cannot start and leaves everything as it was: nothing published, nothing running, no output file truncated', async () => {
    api = await startRuntime();
    const before = await state();
    // the first flow is fine; the second one's onramp reads a file that does not exist, which only opening it finds
    const reply = await apply(stringify(merged(flowDoc('one'), flowDoc('two', { input: join(dir, 'missing.json') }))));
    expect(reply.status, reply.text).to.equal(400);
    expect(error(reply)).to.match(/^mappings: onramp 'two_in' \(file\) cannot start: .*ENOENT/);
    expect(await state()).to.deep.equal(before);
    expect(readFileSync(join(dir, 'out-one.json'), 'utf8')).to.equal('precious\n');
    expect(readFileSync(join(dir, 'out-two.json'), 'utf8')).to.equal('precious\n');
  });

  it('refuses a mapping that links a port that does not exist with the message `eddy server run -f` gives, without the file name', async () => {
    api = await startRuntime();
    const before = await state();
    const { input, output } = files('two');
    const two = {
      onramp: [{ id: 'two_in', type: 'file', config: { source: input } }],
      offramp: [{ id: 'two_out', type: 'file', config: { file: output } }],
      binding: [
        {
          id: 'two',
          links: {
            '/onramp/two_in/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
            '/pipeline/system::passthrough/{instance}/dupz': ['/offramp/two_out/{instance}/in'],
          },
        },
      ],
    };
    const yaml = `${stringify(merged(flowDoc('one'), two))}mapping:\n  /binding/two/main: {}\n`;
    const reply = await apply(yaml);
    expect(reply.status, reply.text).to.equal(400);
    expect(error(reply)).to.equal(
      "mapping '/binding/two/main': link /pipeline/system::passthrough/main/dupz -> /offramp/two_out/main/in: pipeline has no output 'dupz' (outputs: out, err)",
    );
    expect(await state()).to.deep.equal(before);
    expect(readFileSync(join(dir, 'out-one.json'), 'utf8')).to.equal('precious\n');
  });

  it('names the artefact and the field of an invalid artefact (400), and a misspelt section', async () => {
    api = await startRuntime();
    const before = await state();
    const reply = await apply(
      'pipeline:\n  - { id: p, nodes: [{ id: pass, type: passthrough }] }\nonramp:\n  - { id: ticks, type: metronome, config: { interval: soon } }\n',
    );
    expect(reply.status, reply.text).to.equal(400);
    expect(error(reply)).to.equal(
      `onramp 'ticks': config.interval: 'soon' is not a duration; a duration is a positive number of milliseconds, or a number with a unit: 500ms, 10s, 1m, 2h, 1d, or combined: 1h30m`,
    );
    const misspelt = await apply('onramps: []\n');
    expect(misspelt.status).to.equal(400);
    expect(error(misspelt)).to.equal("unknown section 'onramps' (did you mean 'onramp'?) (sections: pipeline, offramp, onramp, binding, mapping, flow)");
    expect(await state()).to.deep.equal(before);
  });

  it('answers 400, not 404, for a mapping whose binding is neither in the body nor published', async () => {
    api = await startRuntime();
    const reply = await apply('mapping:\n  /binding/nowhere/main: {}\n');
    expect(reply.status, reply.text).to.equal(400);
    expect(error(reply)).to.equal("mapping '/binding/nowhere/main': binding 'nowhere' not found");
  });

  it('refuses an artefact that differs from an existing one of the same id (409, naming it) and changes nothing', async () => {
    api = await startRuntime();
    const published = await call(api.base, 'POST', '/offramp', { body: { id: 'one_out', type: 'stdout' } });
    expect(published.status).to.equal(201);
    const before = await state();
    const reply = await apply(flowYaml('one'));
    expect(reply.status, reply.text).to.equal(409);
    expect(error(reply)).to.equal(
      "offramp 'one_out': differs from the offramp 'one_out' that exists already (kept in the data dir or declared earlier); delete it first (DELETE /offramp/one_out) or give this one another id",
    );
    expect(await state()).to.deep.equal(before);
  });

  it('takes the same config again as unchanged (200), and runs the flow once', async () => {
    api = await startRuntime();
    // a pipeline without links: stored with its chain spelled out, and still the same as declared
    const yaml = flowYaml('one', { via: true });
    expect((await apply(yaml)).status).to.equal(201);
    const output = join(dir, 'out-one.json');
    await eventually(() => completeLines(output).length > 0, 10000, 'the event in the output file');
    const again = await apply(yaml);
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.deep.equal({
      dry_run: false,
      published: [],
      activated: [],
      unchanged: [
        { kind: 'pipeline', id: 'one_p' },
        { kind: 'offramp', id: 'one_out' },
        { kind: 'onramp', id: 'one_in' },
        { kind: 'binding', id: 'one' },
      ],
      running: ['/binding/one/main'],
    });
    // not opened again: the file offramp did not truncate its file, and the onramp did not read its input twice
    expect(completeLines(output)).to.deep.equal(['{"from":"one"}']);
  });

  it('applies two requests of the same config one after the other: one publishes and activates (201), the other finds it all done (200)', async () => {
    api = await startRuntime();
    const yaml = flowYaml('one');
    const replies = await Promise.all([apply(yaml), apply(yaml)]);
    expect(replies.map((r) => r.status).sort(), replies.map((r) => r.text).join('\n')).to.deep.equal([200, 201]);
    expect(replies.find((r) => r.status === 200)!.body)
      .to.have.property('running')
      .that.deep.equals(['/binding/one/main']);
  });

  it('refuses a mapping that runs already with other links (409)', async () => {
    api = await startRuntime();
    const binding = {
      id: 'b',
      links: {
        '/onramp/ticks/{instance}/out': ['/pipeline/system::passthrough/{via}/in'],
        '/pipeline/system::passthrough/{via}/out': ['/offramp/system::stdout/system/in'],
      },
    };
    const yaml = (via: string) =>
      `onramp:\n  - { id: ticks, type: metronome, config: { interval: 3600000 } }\nbinding:\n  - ${JSON.stringify(binding)}\nmapping:\n  /binding/b/main: { via: ${via} }\n`;
    const first = await apply(yaml('one'));
    expect(first.status, first.text).to.equal(201);
    expect((await apply(yaml('one'))).status).to.equal(200);
    const reply = await apply(yaml('two'));
    expect(reply.status, reply.text).to.equal(409);
    expect(error(reply)).to.equal(
      "mapping '/binding/b/main': already running with other links (GET /binding/b/main shows them); deactivate it first (DELETE /binding/b/main)",
    );
  });

  it('with ?dry_run=true checks everything, changes nothing, and says what it would do', async () => {
    api = await startRuntime();
    const before = await state();
    const yaml = flowYaml('one');
    const dry = await apply(yaml, '?dry_run=true');
    expect(dry.status, dry.text).to.equal(200);
    expect(dry.body).to.deep.equal({
      dry_run: true,
      published: [
        { kind: 'offramp', id: 'one_out' },
        { kind: 'onramp', id: 'one_in' },
        { kind: 'binding', id: 'one' },
      ],
      activated: ['/binding/one/main'],
      unchanged: [],
      running: [],
    });
    expect(await state()).to.deep.equal(before);
    expect(readFileSync(join(dir, 'out-one.json'), 'utf8')).to.equal('precious\n');
    // the same refusals as the real thing: a link to a port that does not exist, found without publishing
    const bad = await apply(
      yaml.replace(
        'flow:',
        'binding:\n  - { id: two, links: { "/onramp/one_in/{instance}/dupz": ["/offramp/one_out/{instance}/in"] } }\nmapping:\n  /binding/two/main: {}\nflow:',
      ),
      '?dry_run=true',
    );
    expect(bad.status, bad.text).to.equal(400);
    expect(error(bad)).to.match(/^mapping '\/binding\/two\/main': link \/onramp\/one_in\/main\/dupz -> /);
    const typo = await apply(yaml, '?dry_rum=true');
    expect(typo.status).to.equal(400);
    expect(error(typo)).to.equal("query parameter 'dry_rum' is unknown (known: dry_run, replace)");
    expect(await state()).to.deep.equal(before);
  });

  it('enforces what publishing each artefact by itself enforces: no secret in clear text, the paths of --allow-path', async () => {
    api = await startRuntime(new Runtime({ logger: createLogger('silent'), policy: new PathPolicy({ allowPaths: [join(dir, 'allowed')] }) }));
    const before = await state();
    const secret = await apply(
      'offramp:\n  - { id: hook, type: rest, config: { endpoint: { scheme: http, host: 127.0.0.1, port: 1, username: u, password: hunter2 } } }\n',
    );
    expect(secret.status, secret.text).to.equal(400);
    expect(error(secret)).to.match(/^offramp 'hook': config\.endpoint\.password: a secret in clear text; the API takes none unless/);
    expect(secret.text).not.to.include('hunter2');
    const outside = await apply(flowYaml('one'));
    expect(outside.status, outside.text).to.equal(400);
    expect(error(outside)).to.equal(`offramp 'one_out': config.file: '${join(dir, 'out-one.json')}' is outside the allowed paths (${join(dir, 'allowed')})`);
    expect(await state()).to.deep.equal(before);
  });

  it('takes a secret in clear text when the server runs with --api-allow-secrets', async () => {
    api = await startRuntime(undefined, { allowSecrets: true });
    const reply = await apply('offramp:\n  - { id: hook, type: rest, config: { endpoint: { scheme: http, host: 127.0.0.1, port: 1, password: hunter2 } } }\n');
    expect(reply.status, reply.text).to.equal(201);
  });

  it('with --data-dir, keeps what it applied across a restart, and nothing of a refused config', async () => {
    const data = join(dir, 'data');
    const open = async () => startRuntime(new Runtime({ logger: createLogger('silent'), store: await LevelStore.open(data) }));
    api = await open();
    const refused = await apply(stringify(flowDoc('two', { input: join(dir, 'missing.json') })));
    expect(refused.status, refused.text).to.equal(400);
    const applied = await apply(flowYaml('one'));
    expect(applied.status, applied.text).to.equal(201);
    await api.stop();
    // a restart brings back what was applied, and nothing of what was refused
    api = await open();
    expect(api.runtime.list('onramp').filter((id) => !id.startsWith('system::'))).to.deep.equal(['one_in']);
    expect(api.runtime.list('binding')).to.deep.equal(['one']);
    expect(api.runtime.instancesOf('binding', 'one')).to.deep.equal(['main']);
    // the same config again, against the restored runtime: nothing to do
    const again = await apply(flowYaml('one'));
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.have.property('running').that.deep.equals(['/binding/one/main']);
  });

  it('needs a body, and a map of sections', async () => {
    api = await startRuntime();
    const none = await call(api.base, 'POST', '/config', { raw: '', contentType: 'application/json' });
    expect(none.status).to.equal(400);
    expect(error(none)).to.equal('body: missing: POST /config needs a config document (the sections of a config file)');
    const list = await apply('- onramp\n');
    expect(list.status).to.equal(400);
    expect(error(list)).to.equal('the top level must be a map of sections');
  });
});

describe('Runtime.exclusive: one change made of others', () => {
  it('runs the activations asked for from inside it at once, and those asked for from outside after it', async () => {
    const runtime = new Runtime({ logger: createLogger('silent') });
    await runtime.start();
    try {
      const order: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let inside!: () => void;
      const insideDone = new Promise<void>((r) => (inside = r));
      const change = runtime.exclusive(async () => {
        await runtime.activate('pipeline', 'system::passthrough', 'inner');
        order.push('inner');
        inside();
        await held;
        order.push('change ends');
      });
      await insideDone;
      // asked for while the change holds the queue: it waits for the change, whatever the timing
      const outside = runtime.activate('pipeline', 'system::passthrough', 'outer').then(() => order.push('outer'));
      // a pipeline opens without I/O: had it not waited, it would run by the next turn of the event loop
      await new Promise((r) => setImmediate(r));
      expect(runtime.instancesOf('pipeline', 'system::passthrough')).to.deep.equal(['inner']);
      release();
      await Promise.all([change, outside]);
      expect(order).to.deep.equal(['inner', 'change ends', 'outer']);
    } finally {
      await runtime.shutdown();
    }
  });

  it('a callback made inside a change that runs after it ended queues like any other', async () => {
    const queue = new SerialQueue();
    const order: string[] = [];
    let fire!: () => void;
    const later = new Promise<void>((r) => (fire = r));
    let queued!: Promise<unknown>;
    await queue.run(async () => {
      // registered inside the change, so it carries the change's async context
      queued = later.then(() => queue.run(async () => void order.push('callback')));
    });
    let release!: () => void;
    let started!: () => void;
    const blockerStarted = new Promise<void>((r) => (started = r));
    const blocker = queue.run(async () => {
      started();
      await new Promise<void>((r) => (release = r));
      order.push('blocker');
    });
    await blockerStarted;
    fire();
    // the callback has run by now (it was registered on `later` first): queued behind the blocker, it has pushed nothing
    await later;
    release();
    await Promise.all([blocker, queued]);
    expect(order).to.deep.equal(['blocker', 'callback']);
  });
});
