import Ajv2020 from 'ajv/dist/2020';
import { expect } from 'chai';
import { EDDY_KEYWORDS } from '../../src/schema/keywords';
import { createApi } from '../../src/api/server';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { artefactSchemas } from '../../src/schema/artefacts';
import { JSON_HEADERS, send, startApi, type Api } from './helpers';

// eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- a type alias, not an interface: only an alias has the implicit index signature that makes it a SpecData for the validator
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }> & { parameters?: { name: string; in: string }[] }>;
  components: { schemas: Record<string, unknown>; securitySchemes?: unknown };
  security?: unknown;
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * The official OpenAPI schemas, through @seriousme/openapi-schema-validator:
 * it validates against the OAI's published JSON schema for 3.1 and resolves
 * every $ref. It is ESM only; TypeScript compiled to CommonJS turns
 * `import()` into `require()`, which cannot load ESM on Node 20, so the
 * import is made at run time.
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- a real import(): the CommonJS build would turn it into require(), which cannot load this ESM-only package
const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<typeof import('@seriousme/openapi-schema-validator')>;

/** `METHOD /path/{param}` for every route the express app has (its router stack), 405/OPTIONS fallbacks left out. */
function appRoutes(app: ReturnType<typeof createApi>): string[] {
  const stack = (app as unknown as { router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] } }).router.stack;
  return stack
    .filter((layer) => layer.route)
    .flatMap((layer) =>
      Object.keys(layer.route!.methods)
        .filter((m) => m !== '_all')
        .map((m) => `${m.toUpperCase()} ${layer.route!.path.replace(/:(\w+)/g, '{$1}')}`),
    )
    .sort();
}

function documentedRoutes(doc: Doc): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((k) => METHODS.includes(k))
        .map((m) => `${m.toUpperCase()} ${path}`),
    )
    .sort();
}

describe('GET /openapi.json', () => {
  let api: Api;
  let doc: Doc;
  before(async () => {
    api = await startApi();
    const reply = await send(api.port, 'GET', '/openapi.json');
    expect(reply.status).to.equal(200);
    expect(reply.type).to.equal('application/json');
    doc = reply.body as Doc;
  });
  after(() => api.stop());

  it('is a valid OpenAPI 3.1 document (the official schema; every $ref resolves)', async () => {
    const { Validator } = await importEsm('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(doc);
    expect(result.errors, JSON.stringify(result.errors)).to.equal(undefined);
    expect(result.valid).to.equal(true);
    expect(doc.openapi).to.match(/^3\.1\./);
  });

  it('has schemas that are JSON Schema 2020-12 (the dialect of OpenAPI 3.1) and compile with their refs, and unique operation ids', () => {
    const ajv = new Ajv2020({ strict: true, strictTypes: false });
    ajv.addKeyword('components'); // the document's root holds the schemas the refs point into
    for (const keyword of EDDY_KEYWORDS) ajv.addKeyword(keyword); // eddy's annotations (schema/keywords.ts)
    ajv.addSchema({ components: doc.components }, 'doc');
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      expect(ajv.validateSchema(schema as object), `${name}: ${JSON.stringify(ajv.errors)}`).to.equal(true);
      expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).to.be.a('function');
    }
    const ids = Object.values(doc.paths).flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m].operationId));
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('documents every route of the app, and the app has every documented route', () => {
    const app = createApi(new Runtime({ logger: createLogger('silent') }));
    const routes = appRoutes(app);
    expect(routes).to.have.length.greaterThan(30);
    expect(documentedRoutes(doc)).to.deep.equal(routes);
  });

  it('declares every path parameter, with the id pattern', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      expect(
        (item.parameters ?? []).map((p) => p.name),
        path,
      ).to.deep.equal(names);
      for (const p of item.parameters ?? [])
        expect(p).to.deep.include({ in: 'path', required: true, schema: { type: 'string', maxLength: 256, pattern: '^[a-z][a-zA-Z_:]*$' } });
    }
    expect(doc.paths['/binding/{artefact_id}/{instance_id}'].parameters!.map((p) => p.name)).to.deep.equal(['artefact_id', 'instance_id']);
  });

  it('takes the artefact schemas from the ones publishing validates with, with the names of this runtime registries', () => {
    const names = {
      codecs: api.runtime.registries.codecs.names(),
      preprocessors: api.runtime.registries.preprocessors.names(),
      postprocessors: api.runtime.registries.postprocessors.names(),
    };
    const schemas = artefactSchemas(names);
    for (const kind of ['pipeline', 'onramp', 'offramp', 'binding'] as const) {
      expect(doc.components.schemas[kind], kind).to.deep.equal(JSON.parse(JSON.stringify(schemas[kind])));
    }
    const publish = doc.paths['/onramp'].post as unknown as { requestBody: { required: boolean; content: Record<string, { schema: unknown }> } };
    expect(publish.requestBody.required).to.equal(true);
    expect(Object.keys(publish.requestBody.content)).to.deep.equal(['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml']);
    expect(publish.requestBody.content['application/yaml'].schema).to.deep.equal({ $ref: '#/components/schemas/onramp' });
  });

  it('follows the registries: a codec registered on the runtime is in the codec enum', async () => {
    const runtime = new Runtime({ logger: createLogger('silent') });
    runtime.registerCodec({ name: 'morse', create: () => ({ encode: () => Buffer.alloc(0), decode: () => null }) as never });
    const custom = await startApi({}, runtime);
    try {
      const body = (await send(custom.port, 'GET', '/openapi.json')).body as Doc;
      // codec: a name, or {name, config}
      const onramp = body.components.schemas.onramp as { properties: { codec: { anyOf: [{ enum: string[] }] } } };
      expect(onramp.properties.codec.anyOf[0].enum).to.include('morse');
    } finally {
      await custom.stop();
    }
  });

  it('lists the statuses every operation answers with, each error with the {error} body', () => {
    const publish = doc.paths['/pipeline'].post.responses!;
    expect(Object.keys(publish).sort()).to.deep.equal(['201', '400', '403', '406', '409', '413', '415', '503']);
    expect(publish['409']).to.deep.nested.include({ 'content.application/json.schema': { $ref: '#/components/schemas/error' } });
    expect(doc.paths['/version'].get.responses!['200']).to.deep.equal({
      description: 'the version',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/version' } } },
    });
    for (const health of ['/health', '/health/ready', '/health/live']) {
      expect(Object.keys(doc.paths[health].get.responses!).sort(), health).to.deep.equal(['200', '403', '406', '415', '503']);
    }
    expect(Object.keys(doc.paths['/onramp/{artefact_id}/{instance_id}'].delete.responses!).sort()).to.deep.equal(['200', '403', '404', '406', '409', '415']);
    expect(doc.paths['/onramp/{artefact_id}/{instance_id}'].post).not.to.have.property('requestBody');
    expect(doc.paths['/binding/{artefact_id}/{instance_id}'].post).to.have.nested.property('requestBody.required', false);
    expect(doc).not.to.have.property('security');
  });

  it('describes what the API really answers: real replies validate against the documented response schemas', async () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ components: doc.components }, 'doc');
    const check = (body: unknown, path: string, method: string, status: number) => {
      const media = (doc.paths[path][method].responses![String(status)] as { content: Record<string, { schema: { $ref: string } }> }).content[
        'application/json'
      ];
      const validate = ajv.getSchema(`doc${media.schema.$ref}`)!;
      expect(validate(body), `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    };
    const pipeline = {
      id: 'main',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'pass', type: 'passthrough' }],
      links: { in: ['pass'], pass: ['out'] },
    };
    const published = await send(api.port, 'POST', '/pipeline', { headers: JSON_HEADERS, body: JSON.stringify(pipeline) });
    expect(published.status).to.equal(201);
    check(published.body, '/pipeline', 'post', 201);
    check((await send(api.port, 'GET', '/pipeline')).body, '/pipeline', 'get', 200);
    check((await send(api.port, 'GET', '/pipeline/main')).body, '/pipeline/{artefact_id}', 'get', 200);
    const activated = await send(api.port, 'POST', '/pipeline/main/one');
    expect(activated.status).to.equal(201);
    check(activated.body, '/pipeline/{artefact_id}/{instance_id}', 'post', 201);
    check((await send(api.port, 'DELETE', '/pipeline/main/one')).body, '/pipeline/{artefact_id}/{instance_id}', 'delete', 200);
    const conflict = await send(api.port, 'POST', '/pipeline', { headers: JSON_HEADERS, body: JSON.stringify(pipeline) });
    expect(conflict.status).to.equal(409);
    check(conflict.body, '/pipeline', 'post', 409);
    check((await send(api.port, 'DELETE', '/pipeline/main')).body, '/pipeline/{artefact_id}', 'delete', 200);
    check((await send(api.port, 'GET', '/version')).body, '/version', 'get', 200);
    check((await send(api.port, 'GET', '/health')).body, '/health', 'get', 200);
    check((await send(api.port, 'GET', '/health/ready')).body, '/health/ready', 'get', 200);
    check((await send(api.port, 'GET', '/health/live')).body, '/health/live', 'get', 200);
    check((await send(api.port, 'GET', '/offramp/system::stdout')).body, '/offramp/{artefact_id}', 'get', 200);
  });

  it('with a token, declares the bearer scheme and the 401 answers', async () => {
    const locked = await startApi({ token: 's3cret' });
    try {
      const reply = await send(locked.port, 'GET', '/openapi.json', { headers: { authorization: 'Bearer s3cret' } });
      const body = reply.body as Doc;
      expect(body.security).to.deep.equal([{ bearer: [] }]);
      expect(body.components.securitySchemes).to.have.nested.property('bearer.scheme', 'bearer');
      expect(body.paths['/onramp'].get.responses).to.have.property('401');
    } finally {
      await locked.stop();
    }
  });
});
