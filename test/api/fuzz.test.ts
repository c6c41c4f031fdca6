import { expect } from 'chai';
import fc from 'fast-check';
import { stringify as toYaml } from 'yaml';
import { KINDS } from '../../src/runtime/urls';
import { send, startApi, type Api } from './helpers';

/**
 * Generated requests over real HTTP against a started runtime: bodies, ids,
 * content types and Accept headers. Whatever comes, the answer is never a
 * 5xx, the server keeps answering, and a request that fails leaves the
 * repository and the instances exactly as they were. Bounded: a fixed number
 * of runs from a fixed seed (fast-check prints the seed and the shrunk
 * request on failure; EDDY_FUZZ_SEED and EDDY_FUZZ_RUNS explore further).
 */
const SEED = Number(process.env.EDDY_FUZZ_SEED ?? 20_251_011);
const RUNS = Number(process.env.EDDY_FUZZ_RUNS ?? 300);

// Only harmless types: an hourly metronome and the system passthrough. No
// generated artefact may name a file, a socket or the exit offramp.
const TEMPLATES = {
  onramp: { id: 'tick', type: 'metronome', config: { interval: 3_600_000 } },
  pipeline: {
    id: 'main',
    interface: { inputs: ['in'], outputs: ['out'] },
    nodes: [{ id: 'pass', type: 'passthrough' }],
    links: { in: ['pass'], pass: ['out'] },
  },
  binding: { id: 'flow', links: { '/onramp/tick/{instance}/out': ['/pipeline/main/{instance}/in'] } },
  offramp: { id: 'sink', type: 'debug' },
} as const;

const printable = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

const id = fc.oneof(
  fc.constantFrom('tick', 'main', 'flow', 'sink', 'one', 'system::stdout', 'system::passthrough', 'system::metrics', 'system'),
  fc.constantFrom('01', 'A', 'a-b', '..', '%2F', '%00', '%zz', '%', 'é', 'x'.repeat(300), 'a:b', '{instance}'),
  fc.stringMatching(/^[a-z][a-zA-Z_:]{0,12}$/),
  printable(20).map(encodeURIComponent),
);
const kind = fc.oneof(fc.constantFrom(...KINDS), fc.constantFrom('version', 'health', 'openapi.json', 'Pipeline', 'widget', ''));
const path = fc.oneof(
  fc.tuple(kind).map(([k]) => `/${k}`),
  fc.tuple(kind, id).map(([k, a]) => `/${k}/${a}`),
  fc.tuple(kind, id, id).map(([k, a, i]) => `/${k}/${a}/${i}`),
  fc.tuple(kind, id, id, id).map(([k, a, i, x]) => `/${k}/${a}/${i}/${x}`),
);
const method = fc.constantFrom('GET', 'POST', 'POST', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD');
const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/yaml',
      'application/x-yaml',
      'text/yaml',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
    ),
    fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=klingon',
      '*/*',
      ';',
      'application/',
    ),
    printable(30),
  ),
  { nil: undefined },
);
const accept = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/yaml',
      '*/*',
      'application/yaml;q=0, application/json',
      'application/json;q=0',
      'text/*',
      'text/html',
      '*/*;q=0',
    ),
    fc
      .array(
        fc.tuple(
          fc.constantFrom('application/json', 'application/yaml', 'text/yaml', '*/*', 'a/b', 'x'),
          fc.constantFrom('', ';q=0', ';q=0.5', ';q=1', ';q=2', ';q=x'),
        ),
        { maxLength: 4 },
      )
      .map((parts) => parts.map(([t, q]) => t + q).join(', ')),
    printable(30),
  ),
  { nil: undefined },
);

type TemplateKind = keyof typeof TEMPLATES;
const templateKind = fc.constantFrom(...(Object.keys(TEMPLATES) as TemplateKind[]));

/** A template with one field replaced, dropped or added: gets past the parser to the validators. */
const nearlyValid = (k: TemplateKind) =>
  fc.tuple(fc.constantFrom('keep', 'replace', 'drop', 'add'), fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 8 })).map(([how, value, key]) => {
    const artefact: Record<string, unknown> = structuredClone(TEMPLATES[k]);
    const fields = Object.keys(artefact);
    const field = fields[key.length % fields.length];
    if (how === 'replace') artefact[field] = value;
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- dropping a random key of a JSON object is the mutation
    else if (how === 'drop') delete artefact[field];
    else if (how === 'add') artefact[key] = value;
    return artefact;
  });

/** Mostly the right Content-Type for the body, sometimes not. */
const typed = (value: unknown) =>
  fc.tuple(fc.constantFrom('json', 'yaml'), fc.nat(9), contentType).map(([format, dice, other]) => ({
    body: format === 'json' ? JSON.stringify(value) : toYaml(value),
    contentType: dice < 8 ? (format === 'json' ? 'application/json' : 'application/yaml') : other,
  }));

interface GeneratedRequest {
  method: string;
  path: string;
  contentType: string | undefined;
  accept: string | undefined;
  body: string | undefined;
}

/** Requests aimed at the templates' own paths, so that publishing, activating and deleting succeed too. */
const aimed = fc.tuple(templateKind, fc.nat(5), id, accept).chain(([k, what, instance, acc]): fc.Arbitrary<GeneratedRequest> => {
  const artefact = TEMPLATES[k].id;
  switch (what) {
    case 0:
    case 1:
      return nearlyValid(k)
        .chain(typed)
        .map((b) => ({ method: 'POST', path: `/${k}`, accept: acc, ...b }));
    case 2:
      return fc.constant({ method: 'POST', path: `/${k}/${artefact}/${instance}`, accept: acc, contentType: undefined, body: undefined });
    case 3:
      return fc.constant({ method: 'DELETE', path: `/${k}/${artefact}/${instance}`, accept: acc, contentType: undefined, body: undefined });
    default:
      return fc.constant({ method: 'DELETE', path: `/${k}/${artefact}`, accept: acc, contentType: undefined, body: undefined });
  }
});

const yamlTexts = fc.constantFrom(
  'a: &x [1, *x]',
  '&a [*a]',
  '--- 1\n--- 2\n',
  'key: !!binary aGVsbG8=',
  '<<: {a: 1}\nb: 2',
  '? [complex, key]\n: value',
  'id: x\nid: y\n',
  '%YAML 1.1\n---\nid: tick\n',
  'id: tick\ntype: metronome\nconfig: !!str 5',
  '"unterminated',
  '\t- tab',
  '- |\n  text\n- >\n  folded',
  `{${'"a":'.repeat(30)}1${'}'.repeat(30)}`,
  '[' + '['.repeat(70),
);

const body = fc.option(
  fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    fc.jsonValue({ maxDepth: 4 }).map((v) => toYaml(v)),
    templateKind.chain(nearlyValid).map((v) => JSON.stringify(v)),
    templateKind.chain(nearlyValid).map((v) => toYaml(v)),
    fc.constantFrom(...Object.values(TEMPLATES)).map((v) => JSON.stringify(v)),
    yamlTexts,
    fc.string({ maxLength: 60 }),
    fc.uint8Array({ maxLength: 60 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
    fc.integer({ min: 1, max: 90 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  ),
  { nil: undefined },
);

const request: fc.Arbitrary<GeneratedRequest> = fc.oneof(fc.record({ method, path, contentType, accept, body }), aimed);

describe(`REST API fuzzing (${RUNS} generated requests, seed ${SEED})`, () => {
  let api: Api;
  before(async () => (api = await startApi()));
  after(() => api.stop());

  /** Every artefact of every kind, as stored, with its running instances. */
  const state = () =>
    KINDS.flatMap((k) =>
      api.runtime
        .list(k)
        .sort()
        .map((artefact) => `${k}/${artefact} ${JSON.stringify(api.runtime.describe(k, artefact))}`),
    );

  it('never answers 5xx, keeps serving, and a failed request changes nothing', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const before = state();
        const headers: Record<string, string> = {};
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        if (r.accept !== undefined) headers.accept = r.accept;
        const reply = await send(api.port, r.method, r.path, { headers, body: r.body });
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
        const unhealthy = r.method === 'GET' && r.path === '/health' && reply.status === 503;
        expect(reply.status < 500 || unhealthy, `${reply.status} ${reply.text}`).to.equal(true);
        if (reply.status >= 400) expect(state(), `${reply.status} ${reply.text}`).to.deep.equal(before);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    expect((await send(api.port, 'GET', '/version')).status).to.equal(200);
    // the runs reached past the parsers: some requests succeeded, and every kind of refusal occurred
    const seen = [...statuses.keys()];
    expect(seen).to.include.members([200, 201, 400, 404, 405, 415]);
  });
});
