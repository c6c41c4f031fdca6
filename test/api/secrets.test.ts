import { expect } from 'chai';
import { redactSecrets, secretPaths } from '../../src/schema/secrets';
import { call, startRuntime, type Started } from '../helpers/runtime';

const REST_OUT = {
  id: 'hook',
  type: 'rest',
  config: { endpoint: { scheme: 'http', host: '127.0.0.1', port: 1, username: 'u', password: 'hunter2-rest' } },
};
const NATS_OUT = { id: 'bus', type: 'nats', config: { hosts: ['nats://bob:hunter2-url@127.0.0.1:1'], subject: 's', options: { token: 'hunter2-nats' } } };

describe('secrets: shown as ***, refused in clear text over the API', () => {
  describe('schema/secrets.ts', () => {
    const schema = {
      type: 'object',
      properties: {
        password: { type: 'string', writeOnly: true },
        nested: { type: 'object', properties: { token: { type: 'string', writeOnly: true } } },
        opts: { type: 'object', properties: { 'sasl.password': { writeOnly: true } }, additionalProperties: { type: 'string' } },
        either: { anyOf: [{ type: 'string' }, { type: 'object', properties: { key: { type: 'string', writeOnly: true } } }] },
        list: { type: 'array', items: { type: 'object', properties: { secret: { writeOnly: true } } } },
      },
    };
    const value = {
      password: 'p',
      nested: { token: 't', other: 'o' },
      opts: { 'sasl.password': 's', 'client.id': 'c' },
      either: { key: 'k' },
      list: [{ secret: 'x' }, { secret: '' }],
      url: 'amqp://guest:guest@127.0.0.1:5672/%2f',
    };
    it('finds every secret a value sets, through properties, maps, branches and lists (an empty one is none)', () => {
      expect(secretPaths(schema, value)).to.deep.equal(['password', 'nested.token', 'opts.sasl.password', 'either.key', 'list[0].secret']);
      expect(secretPaths(schema, { password: '' })).to.deep.equal([]);
    });
    it('redacts a copy, masking passwords in URLs too, and leaves the value as it was', () => {
      const before = structuredClone(value);
      expect(redactSecrets(schema, value)).to.deep.equal({
        password: '***',
        nested: { token: '***', other: 'o' },
        opts: { 'sasl.password': '***', 'client.id': 'c' },
        either: { key: '***' },
        list: [{ secret: '***' }, { secret: '' }],
        url: 'amqp://guest:***@127.0.0.1:5672/%2f',
      });
      expect(value).to.deep.equal(before);
    });
  });

  describe('the REST API', function () {
    this.timeout(20000);
    let api: Started;
    afterEach(async () => api?.stop());

    it('refuses a secret in clear text, naming the fields (400), and stores nothing', async () => {
      api = await startRuntime();
      const reply = await call(api.base, 'POST', '/offramp', { body: REST_OUT });
      expect(reply.status, reply.text).to.equal(400);
      expect((reply.body as { error: string }).error).to.match(
        /^config\.endpoint\.password: a secret in clear text; the API takes none unless the server runs with --api-allow-secrets/,
      );
      const nats = await call(api.base, 'POST', '/offramp', { body: NATS_OUT });
      expect((nats.body as { error: string }).error).to.match(/^config\.options\.token: a secret/);
      expect((await call(api.base, 'GET', '/offramp/hook')).status).to.equal(404);
    });

    it('with allowSecrets, takes it and never gives it back: publish, get, instance and delete answers show ***', async () => {
      api = await startRuntime(undefined, { allowSecrets: true });
      const published = await call(api.base, 'POST', '/offramp', { body: NATS_OUT });
      expect(published.status, published.text).to.equal(201);
      const answers = [
        published.text,
        (await call(api.base, 'GET', '/offramp/bus')).text,
        (await call(api.base, 'POST', '/offramp', { body: REST_OUT })).text,
        (await call(api.base, 'GET', '/offramp/hook')).text,
      ];
      answers.push((await call(api.base, 'DELETE', '/offramp/hook')).text);
      for (const text of answers) expect(text).not.to.match(/hunter2/);
      expect((published.body as { config: unknown }).config).to.deep.equal({ hosts: ['nats://bob:***@127.0.0.1:1'], subject: 's', options: { token: '***' } });
      // a codec's config too: a schema registry's password
      const avro = {
        id: 'reg',
        type: 'metronome',
        codec: { name: 'avro', config: { registry: { url: 'http://127.0.0.1:1', username: 'u', password: 'hunter2-registry' } } },
        config: { interval: 1000 },
      };
      const withCodec = await call(api.base, 'POST', '/onramp', { body: avro });
      expect(withCodec.status, withCodec.text).to.equal(201);
      expect((withCodec.body as { codec: unknown }).codec).to.deep.equal({
        name: 'avro',
        config: { registry: { url: 'http://127.0.0.1:1', username: 'u', password: '***' } },
      });
      expect((await call(api.base, 'GET', '/onramp/reg')).text).not.to.match(/hunter2/);
      // the runtime keeps the value itself
      expect((api.runtime.repository.get('offramp', 'bus') as unknown as { config: { options: { token: string } } }).config.options.token).to.equal(
        'hunter2-nats',
      );
    });
  });
});
