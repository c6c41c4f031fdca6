import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startRuntime, type Started } from '../helpers/runtime';

const formats = [
  { name: 'JSON', yaml: false, accept: 'application/json', type: 'application/json' },
  { name: 'YAML', yaml: true, accept: 'application/yaml', type: 'application/yaml' },
];

function artefacts(dir: string): Record<string, Record<string, unknown>> {
  return {
    pipeline: {
      id: 'main',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'pass', type: 'passthrough' }],
      links: { in: ['pass'], pass: ['out'] },
    },
    onramp: { id: 'ticks', type: 'metronome', config: { interval: 50 } },
    offramp: { id: 'sink', type: 'file', config: { file: join(dir, 'out.json') } },
    binding: {
      id: 'flow',
      links: {
        '/onramp/ticks/{instance}/out': ['/pipeline/main/{instance}/in'],
        '/pipeline/main/{instance}/out': ['/offramp/sink/{instance}/in'],
      },
    },
  };
}

describe('REST API over HTTP', () => {
  let rt: Started;
  let dir: string;
  beforeEach(async () => {
    rt = await startRuntime();
    dir = mkdtempSync(join(tmpdir(), 'eddy-api-'));
  });
  afterEach(() => rt.stop());

  it('GET /version answers JSON with the package version, even when YAML is asked for', async () => {
    const reply = await call(rt.base, 'GET', '/version', { accept: 'application/yaml' });
    expect(reply.status).to.equal(200);
    expect(reply.type).to.equal('application/json');
    expect(reply.body).to.deep.equal({ version: (JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { version: string }).version });
  });

  it('lists the system artefacts at start', async () => {
    expect((await call(rt.base, 'GET', '/offramp')).body).to.include.members(['system::stdout', 'system::stderr']);
    expect((await call(rt.base, 'GET', '/pipeline')).body).to.include.members(['system::passthrough', 'system::metrics']);
    expect((await call(rt.base, 'GET', '/onramp')).body).to.deep.equal([]);
    expect((await call(rt.base, 'GET', '/binding')).body).to.deep.equal([]);
    const metrics = await call(rt.base, 'GET', '/pipeline/system::metrics');
    expect(metrics.body).to.have.property('instances').that.deep.equals(['system']);
  });

  for (const f of formats) {
    for (const kind of ['pipeline', 'onramp', 'offramp', 'binding']) {
      it(`publishes, lists, reads and deletes a ${kind} in ${f.name}`, async () => {
        const artefact = artefacts(dir)[kind];
        const id = artefact.id as string;
        expect((await call(rt.base, 'GET', `/${kind}/${id}`, { accept: f.accept })).status).to.equal(404);
        const published = await call(rt.base, 'POST', `/${kind}`, { body: artefact, yaml: f.yaml, accept: f.accept });
        expect(published.status).to.equal(201);
        expect(published.type).to.equal(f.type);
        expect(published.body).to.deep.equal(artefact);
        const again = await call(rt.base, 'POST', `/${kind}`, { body: artefact, yaml: f.yaml, accept: f.accept });
        expect(again.status).to.equal(409);
        expect(again.type).to.equal(f.type);
        expect(again.body).to.have.property('error').that.includes(id);
        expect((await call(rt.base, 'GET', `/${kind}`, { accept: f.accept })).body).to.include(id);
        const got = await call(rt.base, 'GET', `/${kind}/${id}`, { accept: f.accept });
        expect(got.status).to.equal(200);
        expect(got.type).to.equal(f.type);
        expect(got.body).to.deep.equal({ artefact, instances: [] });
        const deleted = await call(rt.base, 'DELETE', `/${kind}/${id}`, { accept: f.accept });
        expect(deleted.status).to.equal(200);
        expect(deleted.body).to.deep.equal(artefact);
        expect((await call(rt.base, 'GET', `/${kind}`, { accept: f.accept })).body).not.to.include(id);
        const missing = await call(rt.base, 'DELETE', `/${kind}/${id}`, { accept: f.accept });
        expect(missing.status).to.equal(404);
        expect(missing.type).to.equal(f.type);
        expect(missing.body).to.have.property('error');
      });
    }

    it(`activates, reads and deactivates a binding instance in ${f.name}, refusing deletes while it runs`, async () => {
      const a = artefacts(dir);
      for (const kind of ['pipeline', 'onramp', 'offramp', 'binding']) {
        expect((await call(rt.base, 'POST', `/${kind}`, { body: a[kind], yaml: f.yaml })).status).to.equal(201);
      }
      const activated = await call(rt.base, 'POST', '/binding/flow/one', { accept: f.accept });
      expect(activated.status).to.equal(201);
      expect(activated.type).to.equal(f.type);
      expect(activated.body).to.deep.equal({
        id: 'flow',
        links: { '/onramp/ticks/one/out': ['/pipeline/main/one/in'], '/pipeline/main/one/out': ['/offramp/sink/one/in'] },
      });
      expect((await call(rt.base, 'POST', '/binding/flow/one')).status).to.equal(409);
      expect((await call(rt.base, 'GET', '/binding/flow/one', { accept: f.accept })).body).to.deep.equal(activated.body);
      expect((await call(rt.base, 'GET', '/onramp/ticks')).body)
        .to.have.property('instances')
        .that.deep.equals(['one']);
      expect((await call(rt.base, 'GET', '/pipeline/main/one')).status).to.equal(200);
      for (const kind of ['pipeline', 'onramp', 'offramp', 'binding']) {
        const refused = await call(rt.base, 'DELETE', `/${kind}/${String(a[kind].id)}`, { accept: f.accept });
        expect(refused.status, kind).to.equal(409);
        expect(refused.body)
          .to.have.property('error')
          .that.matches(/running instances/);
      }
      // an instance a binding uses cannot be pulled out from under it
      expect((await call(rt.base, 'DELETE', '/onramp/ticks/one')).status).to.equal(409);
      const deactivated = await call(rt.base, 'DELETE', '/binding/flow/one', { accept: f.accept });
      expect(deactivated.status).to.equal(200);
      expect(deactivated.body).to.deep.equal(activated.body);
      expect((await call(rt.base, 'DELETE', '/binding/flow/one')).status).to.equal(404);
      expect((await call(rt.base, 'GET', '/binding/flow/one')).status).to.equal(404);
      for (const kind of ['pipeline', 'onramp', 'offramp']) {
        expect((await call(rt.base, 'GET', `/${kind}/${String(a[kind].id)}`)).body, kind)
          .to.have.property('instances')
          .that.deep.equals([]);
      }
      for (const kind of ['binding', 'pipeline', 'onramp', 'offramp']) {
        expect((await call(rt.base, 'DELETE', `/${kind}/${String(a[kind].id)}`)).status, kind).to.equal(200);
      }
    });
  }

  for (const f of formats) {
    it(`activates, reads and deactivates onramp, offramp and pipeline instances directly in ${f.name}`, async () => {
      const a = artefacts(dir);
      for (const kind of ['pipeline', 'onramp', 'offramp']) {
        await call(rt.base, 'POST', `/${kind}`, { body: a[kind] });
        const id = a[kind].id as string;
        const activated = await call(rt.base, 'POST', `/${kind}/${id}/direct`, { accept: f.accept });
        expect(activated.status, kind).to.equal(201);
        expect(activated.type).to.equal(f.type);
        expect(activated.body).to.deep.equal(a[kind]);
        const got = await call(rt.base, 'GET', `/${kind}/${id}/direct`, { accept: f.accept });
        expect(got.status).to.equal(200);
        expect(got.type).to.equal(f.type);
        expect(got.body).to.deep.equal(a[kind]);
        const missing = await call(rt.base, 'GET', `/${kind}/${id}/other`, { accept: f.accept });
        expect(missing.status).to.equal(404);
        expect(missing.type).to.equal(f.type);
        const deactivated = await call(rt.base, 'DELETE', `/${kind}/${id}/direct`, { accept: f.accept });
        expect(deactivated.status).to.equal(200);
        expect(deactivated.type).to.equal(f.type);
        expect(deactivated.body).to.deep.equal(a[kind]);
        expect((await call(rt.base, 'DELETE', `/${kind}/${id}/direct`)).status).to.equal(404);
      }
    });
  }

  it('answers 404 with an error for unknown artefacts and instances', async () => {
    for (const [method, path] of [
      ['GET', '/onramp/nope'],
      ['POST', '/binding/nope/one'],
      ['GET', '/binding/nope/one'],
      ['DELETE', '/pipeline/nope/one'],
      ['GET', '/widget'],
      ['GET', '/a/b/c/d'],
    ]) {
      const reply = await call(rt.base, method, path);
      expect(reply.status, `${method} ${path}`).to.equal(404);
      expect(reply.body, `${method} ${path}`).to.have.property('error');
    }
  });

  it('answers errors in YAML when YAML is accepted, JSON for any other Accept', async () => {
    const yaml = await call(rt.base, 'GET', '/onramp/nope', { accept: 'application/yaml' });
    expect(yaml.type).to.equal('application/yaml');
    expect(yaml.text).to.match(/^error: /);
    const other = await call(rt.base, 'GET', '/onramp/nope', { accept: 'application/snot' });
    expect(other.type).to.equal('application/json');
    expect(other.body).to.deep.equal({ error: "onramp 'nope' not found" });
  });

  it('refuses to delete or deactivate system artefacts with 409', async () => {
    for (const path of ['/offramp/system::stdout', '/pipeline/system::metrics', '/pipeline/system::passthrough']) {
      const reply = await call(rt.base, 'DELETE', path);
      expect(reply.status, path).to.equal(409);
      expect(reply.body)
        .to.have.property('error')
        .that.matches(/system artefact/);
    }
    expect((await call(rt.base, 'DELETE', '/offramp/system::stdout/system')).status).to.equal(409);
  });

  describe('bad input', () => {
    const bad: [string, string, unknown, RegExp][] = [
      ['onramp', 'missing type', { id: 'x' }, /missing required field 'type'/],
      [
        'onramp',
        'id pattern',
        { id: 'my-flow', type: 'metronome', config: { interval: 1 } },
        /^id: 'my-flow' has '-' \(character 3\); an id starts with a lowercase letter and holds only letters, '_' and ':'$/,
      ],
      ['onramp', 'a digit in the id', { id: 't1', type: 'metronome', config: { interval: 1 } }, /^id: 't1' has '1' \(character 2\); an id starts with/],
      [
        'onramp',
        'an over-long id',
        { id: 'a'.repeat(900_000), type: 'metronome', config: { interval: 1 } },
        /^id: 'a{40}…' is 900000 characters long; an id has at most 256$/,
      ],
      [
        'pipeline',
        'a node id with a digit',
        { id: 'p', interface: {}, nodes: [{ id: 'node1', type: 'passthrough' }], links: {} },
        /^nodes\[0\]\.id: 'node1' has '1' \(character 5\); an id starts with a lowercase letter/,
      ],
      [
        'pipeline',
        'nodez for nodes',
        { id: 'p', interface: {}, nodez: [], links: {} },
        /^\(top level\): missing required field 'nodes' \(found unknown field 'nodez' — did you mean 'nodes'\?\)$/,
      ],
      [
        'pipeline',
        'a bad duration',
        {
          id: 'p',
          interface: { inputs: ['in'] },
          nodes: [{ id: 'd', type: 'generic::dedupe', config: { key: 'event', within: '10 seconds' } }],
          links: { in: ['d'] },
        },
        /^nodes\[0\]\.config\.within: '10 seconds' is not a duration; a duration is a positive number of milliseconds, or a number with a unit: 500ms, 10s, 1m/,
      ],
      ['onramp', 'unknown field', { id: 'x', type: 'metronome', colour: 'red' }, /unknown field 'colour'/],
      ['onramp', 'unknown type', { id: 'x', type: 'teleport' }, /type: unknown onramp 'teleport'/],
      ['onramp', 'unknown codec', { id: 'x', type: 'metronome', codec: 'morse', config: { interval: 1 } }, /codec: must be one of/],
      ['onramp', 'unknown preprocessor', { id: 'x', type: 'metronome', preprocessors: ['unzip'], config: { interval: 1 } }, /preprocessors/],
      ['onramp', 'bad config', { id: 'x', type: 'metronome', config: { interval: 'fast' } }, /config\.interval: 'fast' is not a duration/],
      ['onramp', 'missing config key', { id: 'x', type: 'file', config: {} }, /config: missing required field 'source'/],
      ['onramp', 'unknown config key', { id: 'x', type: 'metronome', config: { interval: 5, jitter: 1 } }, /config: unknown field 'jitter'/],
      ['offramp', 'unknown type', { id: 'x', type: 'carrier_pigeon' }, /unknown offramp 'carrier_pigeon'/],
      [
        'pipeline',
        'unknown operator',
        { id: 'p', interface: {}, nodes: [{ id: 'a', type: 'magic' }], links: { in: ['a'] } },
        /nodes\[0\]\.type: unknown operator 'magic'/,
      ],
      [
        'pipeline',
        'an operator named without its namespace',
        { id: 'p', interface: {}, nodes: [{ id: 'a', type: 'batch' }], links: {} },
        /^nodes\[0\]\.type: unknown operator 'batch' \(did you mean 'generic::batch'\?\) \(known: /,
      ],
      ['onramp', 'a misspelled type', { id: 'x', type: 'metronom' }, /^type: unknown onramp 'metronom' \(did you mean 'metronome'\?\)/],
      ['pipeline', 'unknown link target', { id: 'p', interface: {}, nodes: [{ id: 'a', type: 'passthrough' }], links: { in: ['b'] } }, /links\.in: target 'b'/],
      [
        'pipeline',
        'cycle',
        {
          id: 'p',
          interface: {},
          nodes: [
            { id: 'a', type: 'passthrough' },
            { id: 'b', type: 'passthrough' },
          ],
          links: { in: ['a'], a: ['b'], b: ['a'] },
        },
        /cycle/,
      ],
      // links and interface may be left out (a chain: pipeline-chain.test.ts); nodes may not
      ['pipeline', 'missing nodes', { id: 'p', interface: {}, links: {} }, /missing required field 'nodes'/],
      ['binding', 'bad link url', { id: 'b', links: { '/queue/x/y': ['/pipeline/p/i'] } }, /links: invalid key/],
      [
        'binding',
        'bad destination',
        { id: 'b', links: { '/onramp/x/y': ['nowhere'] } },
        /links\.\/onramp\/x\/y\[0\]: 'nowhere' must be a link URL \/kind\/artefact\/instance/,
      ],
      ['binding', 'not an object', ['a'], /must be an object/],
    ];
    for (const [kind, what, body, message] of bad) {
      it(`rejects a ${kind} with ${what} with 400 naming the field`, async () => {
        const reply = await call(rt.base, 'POST', `/${kind}`, { body });
        expect(reply.status).to.equal(400);
        expect(reply.body).to.have.property('error').that.matches(message);
        expect((await call(rt.base, 'GET', `/${kind}`)).body).not.to.include((body as { id?: string }).id);
      });
    }

    it('rejects malformed JSON and YAML with 400', async () => {
      const json = await call(rt.base, 'POST', '/onramp', { raw: '{"id": ', contentType: 'application/json' });
      expect(json.status).to.equal(400);
      expect(json.body)
        .to.have.property('error')
        .that.matches(/invalid JSON/);
      const yaml = await call(rt.base, 'POST', '/onramp', { raw: 'id: [unclosed', contentType: 'application/yaml' });
      expect(yaml.status).to.equal(400);
      expect(yaml.body)
        .to.have.property('error')
        .that.matches(/invalid YAML/);
    });

    it('shows the offending line of a YAML body with a caret under the column', async () => {
      const raw = 'id: in\ntype: metronome\nconfig: interval: 10\n';
      const reply = await call(rt.base, 'POST', '/onramp', { raw, contentType: 'application/yaml' });
      expect(reply.status).to.equal(400);
      expect((reply.body as { error: string }).error).to.equal(
        [
          'body: invalid YAML: Nested mappings are not allowed in compact mappings at line 3, column 9:',
          '  2 | type: metronome',
          '  3 | config: interval: 10',
          '    |         ^',
        ].join('\n'),
      );
    });

    it('rejects other content types with 415', async () => {
      const reply = await call(rt.base, 'POST', '/onramp', { raw: 'id=x', contentType: 'application/x-www-form-urlencoded' });
      expect(reply.status).to.equal(415);
      expect(reply.body)
        .to.have.property('error')
        .that.matches(/Content-Type/);
    });

    it('rejects an instance id outside the id pattern or over 256 characters, and a binding naming a missing artefact, changing nothing', async () => {
      const a = artefacts(dir);
      await call(rt.base, 'POST', '/onramp', { body: a.onramp });
      const digits = await call(rt.base, 'POST', '/onramp/ticks/01');
      expect(digits.status).to.equal(400);
      expect(digits.body).to.deep.equal({
        error: "instance id '01' starts with '0'; an id starts with a lowercase letter and holds only letters, '_' and ':'",
      });
      const long = await call(rt.base, 'POST', `/onramp/ticks/${'a'.repeat(257)}`);
      expect(long.status).to.equal(400);
      expect(long.body).to.deep.equal({ error: `instance id '${'a'.repeat(40)}…' is 257 characters long; an id has at most 256` });
      // the limit itself is an id
      expect((await call(rt.base, 'POST', `/onramp/ticks/${'a'.repeat(256)}`)).status).to.equal(201);
      expect((await call(rt.base, 'DELETE', `/onramp/ticks/${'a'.repeat(256)}`)).status).to.equal(200);
      await call(rt.base, 'POST', '/binding', { body: a.binding });
      const reply = await call(rt.base, 'POST', '/binding/flow/one');
      expect(reply.status).to.equal(404);
      expect(reply.body)
        .to.have.property('error')
        .that.matches(/pipeline 'main' not found/);
      expect((await call(rt.base, 'GET', '/onramp/ticks')).body)
        .to.have.property('instances')
        .that.deep.equals([]);
      expect((await call(rt.base, 'DELETE', '/onramp/ticks')).status).to.equal(200);
    });

    it('rejects a link to a port the pipeline lacks with 400 and rolls back', async () => {
      const a = artefacts(dir);
      for (const kind of ['pipeline', 'onramp', 'offramp']) await call(rt.base, 'POST', `/${kind}`, { body: a[kind] });
      await call(rt.base, 'POST', '/binding', {
        body: { id: 'wrong', links: { '/onramp/ticks/{instance}/out': ['/pipeline/main/{instance}/sideways'] } },
      });
      const reply = await call(rt.base, 'POST', '/binding/wrong/one');
      expect(reply.status).to.equal(400);
      expect(reply.body)
        .to.have.property('error')
        .that.matches(/no input 'sideways'/);
      expect((await call(rt.base, 'GET', '/pipeline/main')).body)
        .to.have.property('instances')
        .that.deep.equals([]);
      expect((await call(rt.base, 'GET', '/onramp/ticks')).body)
        .to.have.property('instances')
        .that.deep.equals([]);
    });
  });
});
