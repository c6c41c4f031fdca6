/**
 * docs/security.md "Secrets", field by field: the page's table of secret
 * fields is the list. Every builtin type's schema is walked for the fields
 * it marks (`writeOnly`, and the header maps whose credential headers are
 * secrets), and the two lists must be equal: a field documented but not
 * marked, or marked but not documented, fails. Then every field of the list
 * is published with a secret in clear text: refused over the API (400,
 * naming the field, never echoing the secret), and with
 * --api-allow-secrets taken, shown as "***" by the answers and kept by the
 * runtime.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFile } from '../../src/config/load';
import { createLogger } from '../../src/core/logger';
import { Registries } from '../../src/runtime/registries';
import { Runtime } from '../../src/runtime/runtime';
import type { Kind } from '../../src/runtime/urls';
import { CREDENTIAL_HEADERS } from '../../src/schema/fields';
import type { JsonSchema } from '../../src/schema/json-schema';
import { docBlock, ROOT } from '../helpers/readme';
import { readFileSync } from 'node:fs';
import { call, startRuntime, type Started } from '../helpers/runtime';

const SECRET = 'S3cret-4711';

/** A secret field of a type: `rest offramp: endpoint.password`, `otel offramp: headers` (a header map). */
const fieldKey = (type: string, side: string, field: string) => `${type} ${side}: ${field}`;

/** docs/security.md's table under "## Secrets": one key per type and field. */
function documentedFields(): string[] {
  const text = readFileSync(join(ROOT, 'docs/security.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Secrets\n'));
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  expect(rows.length, 'the table of docs/security.md "Secrets"').to.be.greaterThan(5);
  return rows.flatMap(([, type, fields]) => {
    const [, name, side] = /^`([^`]+)` (onramp|offramp|codec|operator)$/.exec(type) ?? [];
    expect(name, `a type in docs/security.md: ${type}`).to.be.a('string');
    return [...fields.matchAll(/`([^`]+)`/g)].map((m) => fieldKey(name, side, m[1]));
  });
}

/** The fields a schema marks secret: `writeOnly` ones by their path, header maps (`secretKeys`) by theirs. */
function markedFields(schema: unknown, path = ''): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as JsonSchema;
  if (node.writeOnly === true) return [path];
  const found: string[] = Array.isArray(node.secretKeys) ? [path] : [];
  for (const branch of ['anyOf', 'oneOf', 'allOf']) for (const s of (node[branch] as unknown[] | undefined) ?? []) found.push(...markedFields(s, path));
  for (const [k, v] of Object.entries((node.properties as Record<string, unknown> | undefined) ?? {}))
    found.push(...markedFields(v, path === '' ? k : `${path}.${k}`));
  if (typeof node.additionalProperties === 'object') found.push(...markedFields(node.additionalProperties, `${path}.*`));
  if (typeof node.items === 'object') found.push(...markedFields(node.items, `${path}[]`));
  return found;
}

/** Every secret field the builtin types' schemas mark. */
function declaredFields(): string[] {
  const registries = Registries.withBuiltins();
  const sides = [
    ['onramp', registries.onramps],
    ['offramp', registries.offramps],
    ['codec', registries.codecs],
    ['operator', registries.operators],
    ['preprocessor', registries.preprocessors],
    ['postprocessor', registries.postprocessors],
  ] as const;
  return sides.flatMap(([side, registry]) =>
    registry.names().flatMap((name) => [...new Set(markedFields(registry.get(name).configSchema))].map((field) => fieldKey(name, side, field))),
  );
}

/** One secret field, published: the artefact, where its secret sits in it, and the path the 400 names. */
interface Case {
  key: string;
  kind: Kind;
  body: Record<string, unknown>;
  /** the path of the secret in the artefact, as the refusal names it */
  named: string;
  /** the path of the secret in the artefact */
  at: (string | number)[];
  /** what the runtime keeps there, when not the secret alone */
  kept?: unknown;
}

const ramp = (kind: 'onramp' | 'offramp', type: string, config: Record<string, unknown>) => ({ kind, body: { type, config } });

/** `set(obj, [a, b], v)`: obj.a.b = v, making the objects on the way. */
function set(target: Record<string, unknown>, path: (string | number)[], value: unknown): Record<string, unknown> {
  let node = target as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) node = (node[step] ??= {}) as Record<string | number, unknown>;
  node[path[path.length - 1]] = value;
  return target;
}

function get(target: unknown, path: (string | number)[]): unknown {
  return path.reduce<unknown>((node, step) => (node as Record<string | number, unknown> | undefined)?.[step], target);
}

/** `Proxy-Authorization` for `proxy-authorization`: a header named in another case is as secret. */
const titleCase = (name: string) => name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());

const KAFKA_SASL = { 'security.protocol': 'sasl_plaintext', 'sasl.mechanisms': 'PLAIN', 'sasl.username': 'u' };
const KAFKA_TLS = { 'security.protocol': 'ssl' };
const KAFKA = {
  onramp: { group_id: 'g', topics: ['t'], brokers: ['127.0.0.1:1'] },
  offramp: { topic: 't', brokers: ['127.0.0.1:1'] },
};
const POSTGRES = {
  onramp: { host: '127.0.0.1', port: 1, user: 'u', dbname: 'd', query: 'SELECT * FROM e WHERE t >= $1 AND t < $2', interval_ms: 1000 },
  offramp: { host: '127.0.0.1', port: 1, user: 'u', dbname: 'd', table: 'events' },
};

/** The cases of one secret field of a ramp's config. */
function rampField(kind: 'onramp' | 'offramp', type: string, field: string, config: Record<string, unknown>, at: (string | number)[]): Case {
  return {
    key: fieldKey(type, kind, field),
    ...ramp(kind, type, set(structuredClone(config), at, SECRET)),
    named: `config.${at.join('.')}`,
    at: ['config', ...at],
  };
}

/** The credential headers docs/security.md names: "In a header map (…) the values of `authorization`, … are secrets". */
function documentedHeaders(): string[] {
  const text = readFileSync(join(ROOT, 'docs/security.md'), 'utf8').replace(/\s+/g, ' ');
  const sentence = /\*\*Credential headers\.\*\* In a header map \([^)]*\) the values of (.*?) are secrets/.exec(text);
  expect(sentence, 'the credential headers sentence of docs/security.md').not.to.equal(null);
  return [...sentence![1].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/**
 * A header map's cases: each credential header the page names (every other
 * one in title case), one the artefact lists in secret_headers, and, where
 * a header may take a list of values, a list.
 */
function headerCases(type: string, config: Record<string, unknown>, lists: boolean): Case[] {
  const names = documentedHeaders().map((name, i) => (i % 2 === 1 ? titleCase(name) : name));
  const cases = names.map((name) => rampField('offramp', type, 'headers', { ...config, headers: { 'content-type': 'application/json' } }, ['headers', name]));
  cases.push(rampField('offramp', type, 'headers', { ...config, secret_headers: ['X-Tenant-Token'] }, ['headers', 'x-tenant-token']));
  if (lists) {
    const list = rampField('offramp', type, 'headers', config, ['headers', 'authorization']);
    set(list.body, ['config', 'headers', 'authorization'], ['Basic e30=', SECRET]);
    cases.push({ ...list, kept: ['Basic e30=', SECRET] });
  }
  return cases;
}

function cases(): Case[] {
  const rest = { endpoint: 'http://127.0.0.1:1/' };
  const nats = () => ({ hosts: ['127.0.0.1:1'], subject: 's', options: {} });
  const list: Case[] = [
    rampField('offramp', 'rest', 'endpoint.password', { endpoint: { scheme: 'http', host: '127.0.0.1', port: 1, username: 'u' } }, ['endpoint', 'password']),
    ...headerCases('rest', rest, true),
    ...headerCases('otel', { endpoint: 'http://127.0.0.1:1' }, false),
    ...headerCases('nats', nats(), true),
    ...(['onramp', 'offramp'] as const).flatMap((kind) => [
      rampField(kind, 'nats', 'options.token', nats(), ['options', 'token']),
      rampField(kind, 'nats', 'options.password', { ...nats(), options: { username: 'u' } }, ['options', 'password']),
      rampField(kind, 'kafka', 'rdkafka_options.sasl.password', { ...KAFKA[kind], rdkafka_options: KAFKA_SASL }, ['rdkafka_options', 'sasl.password']),
      ...['ssl.key.password', 'ssl.keystore.password', 'ssl.key.pem'].map((option) =>
        rampField(kind, 'kafka', `rdkafka_options.${option}`, { ...KAFKA[kind], rdkafka_options: KAFKA_TLS }, ['rdkafka_options', option]),
      ),
      rampField(kind, 'postgres', 'password', POSTGRES[kind], ['password']),
    ]),
    rampField('onramp', 'chat', 'token', {}, ['token']),
    rampField('offramp', 'logvendor', 'license_key', {}, ['license_key']),
    ...['avro', 'protobuf'].map((codec) => ({
      key: fieldKey(codec, 'codec', 'registry.password'),
      kind: 'onramp' as const,
      body: {
        type: 'metronome',
        config: { interval: 1000 },
        codec: { name: codec, config: { registry: { url: 'http://127.0.0.1:1', username: 'u', password: SECRET } } },
      },
      named: 'codec.config.registry.password',
      at: ['codec', 'config', 'registry', 'password'],
    })),
    {
      key: fieldKey('enrich::lookup', 'operator', 'table.postgres.password'),
      kind: 'pipeline',
      body: {
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [
          {
            id: 'owners',
            type: 'enrich::lookup',
            config: {
              table: { key: 'k', postgres: { host: '127.0.0.1', port: 1, user: 'u', password: SECRET, dbname: 'd', query: 'select 1 as k' } },
              key: 'event.id',
              into: 'owner',
            },
          },
        ],
        links: { in: ['owners'], owners: ['out'] },
      },
      named: 'nodes[0].config.table.postgres.password',
      at: ['nodes', 0, 'config', 'table', 'postgres', 'password'],
    },
  ];
  // ids are letters only (an artefact id takes no digits): probe_b, probe_bc, …
  return list.map((c, i) => ({ ...c, body: { id: `probe_${String(i).replace(/\d/g, (d) => 'abcdefghij'[Number(d)])}`, ...c.body } }));
}

describe('secret fields: every one docs/security.md lists is marked, refused in clear over the API and shown as ***', function () {
  this.timeout(30000);

  it("docs/security.md's table lists exactly the fields the builtin types' schemas mark secret", () => {
    expect(declaredFields().sort()).to.deep.equal(documentedFields().sort());
  });

  it('the credential headers the page names are those the header maps hold secret', () => {
    expect(documentedHeaders()).to.deep.equal([...CREDENTIAL_HEADERS]);
  });

  it('the cases below cover every listed field', () => {
    expect([...new Set(cases().map((c) => c.key))].sort()).to.deep.equal(documentedFields().sort());
  });

  describe('each field over the API', () => {
    let closed: Started;
    let open: Started;
    before(async () => {
      closed = await startRuntime();
      open = await startRuntime(undefined, { allowSecrets: true });
    });
    after(async () => {
      await closed?.stop();
      await open?.stop();
    });

    for (const c of cases()) {
      it(`${c.key} (${c.named})`, async () => {
        const path = `/${c.kind}/${c.body.id as string}`;
        const refused = await call(closed.base, 'POST', `/${c.kind}`, { body: c.body });
        expect(refused.status, refused.text).to.equal(400);
        expect((refused.body as { error: string }).error).to.match(new RegExp(`^${c.named.replace(/[.[\]]/g, '\\$&')}: a secret in clear text`));
        expect(refused.text).not.to.contain(SECRET);
        expect((await call(closed.base, 'GET', path)).status, 'nothing stored').to.equal(404);

        const published = await call(open.base, 'POST', `/${c.kind}`, { body: c.body });
        expect(published.status, published.text).to.equal(201);
        const got = await call(open.base, 'GET', path);
        for (const answer of [published.text, got.text]) expect(answer).not.to.contain(SECRET);
        expect(get(published.body, c.at)).to.equal('***');
        expect(get((got.body as { artefact: unknown }).artefact, c.at)).to.equal('***');
        // a header map's other headers stay as they are
        if (c.at[1] === 'headers' && get(c.body, ['config', 'headers', 'content-type']) !== undefined)
          expect(get(published.body, ['config', 'headers', 'content-type'])).to.equal('application/json');
        // the runtime keeps the value itself: it connects with it
        expect(get(open.runtime.repository.get(c.kind, c.body.id as string), c.at)).to.deep.equal(c.kept ?? SECRET);
      });
    }
  });

  describe('credentials in URLs', () => {
    let api: Started;
    afterEach(async () => api?.stop());

    it('are masked in every answer but not refused (elastic nodes with a password, and with a token; a description)', async () => {
      api = await startRuntime();
      const elastic = { id: 'search', type: 'elastic', config: { nodes: [`http://elastic:${SECRET}@127.0.0.1:1`, `https://${SECRET}@127.0.0.1:1/`] } };
      const published = await call(api.base, 'POST', '/offramp', { body: elastic });
      expect(published.status, published.text).to.equal(201);
      const got = await call(api.base, 'GET', '/offramp/search');
      expect((got.body as { artefact: { config: unknown } }).artefact.config).to.deep.equal({
        nodes: ['http://elastic:***@127.0.0.1:1', 'https://***@127.0.0.1:1/'],
      });
      expect(published.text + got.text).not.to.contain(SECRET);
      // in any field of any artefact: a binding's description
      const binding = { id: 'mirror', description: `mirrors to amqp://eddy:${SECRET}@mq:5672`, links: { '/onramp/a/{i}/out': ['/offramp/search/{i}/in'] } };
      expect((await call(api.base, 'POST', '/binding', { body: binding })).body).to.have.property('description', 'mirrors to amqp://eddy:***@mq:5672');
      expect((await call(api.base, 'GET', '/binding/mirror')).text).not.to.contain(SECRET);
    });
  });

  describe("the page's example: a config file with ${NAME}", () => {
    const env = { API_KEY: 'S3cret-api-4712', TENANT_TOKEN: 'S3cret-tenant-4713' };
    let dir: string;
    let api: Started;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'eddy-secret-headers-'));
      Object.assign(process.env, env);
    });
    after(async () => {
      // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- only delete unsets a variable (assigning undefined sets the string 'undefined')
      for (const name of Object.keys(env)) delete process.env[name];
      await api?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('loads, and GET shows its credential header and the one secret_headers lists as ***, the others as written', async () => {
      const file = join(dir, 'search.yaml');
      writeFileSync(file, docBlock('docs/security.md', '## Secrets', 'yaml'));
      api = await startRuntime(new Runtime({ logger: createLogger('silent') }));
      await loadConfigFile(api.runtime, file);
      const got = await call(api.base, 'GET', '/offramp/search');
      expect(got.status, got.text).to.equal(200);
      expect((got.body as { artefact: { config: { headers: unknown } } }).artefact.config.headers).to.deep.equal({
        authorization: '***',
        'x-tenant-token': '***',
        'content-type': 'application/x-ndjson',
      });
      for (const secret of Object.values(env)) expect(got.text).not.to.contain(secret);
      // the runtime has the values the file's references name
      const kept = api.runtime.repository.get('offramp', 'search') as unknown as { config: { headers: Record<string, string> } };
      expect(kept.config.headers.authorization).to.equal(`ApiKey ${env.API_KEY}`);
    });
  });
});
