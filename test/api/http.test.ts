import { expect } from 'chai';
import { negotiate } from '../../src/api/negotiate';
import { JSON_HEADERS, onramp, repositoryState, send, startApi, type Api } from './helpers';

describe('REST API: HTTP methods, content types and negotiation', () => {
  let api: Api;
  before(async () => (api = await startApi()));
  after(() => api.stop());

  describe('methods', () => {
    const allowed: [string, string][] = [
      ['/version', 'GET, HEAD, OPTIONS'],
      ['/openapi.json', 'GET, HEAD, OPTIONS'],
      ['/onramp', 'GET, HEAD, POST, OPTIONS'],
      ['/pipeline/main', 'GET, HEAD, DELETE, OPTIONS'],
      ['/binding/flow/one', 'POST, GET, HEAD, DELETE, OPTIONS'],
    ];
    for (const [path, allow] of allowed) {
      it(`answers 405 with Allow: ${allow} to PUT and PATCH on ${path}`, async () => {
        for (const method of ['PUT', 'PATCH']) {
          const reply = await send(api.port, method, path, { headers: JSON_HEADERS, body: '{}' });
          expect(reply.status, method).to.equal(405);
          expect(reply.headers.allow).to.equal(allow);
          expect(reply.body).to.deep.equal({ error: `${method} is not allowed on ${path}; allowed: ${allow}` });
        }
      });
    }

    it('answers POST on /version with 405, not 404, and an unknown path with 404', async () => {
      expect((await send(api.port, 'POST', '/version', { headers: JSON_HEADERS, body: '{}' })).status).to.equal(405);
      const unknown = await send(api.port, 'GET', '/widget');
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.deep.equal({ error: 'no route for GET /widget (the routes are in GET /openapi.json)' });
      expect((await send(api.port, 'DELETE', '/onramp/a/b/c')).status).to.equal(404);
    });

    it('answers OPTIONS with 204 and Allow, and HEAD like GET without a body', async () => {
      const options = await send(api.port, 'OPTIONS', '/onramp');
      expect(options.status).to.equal(204);
      expect(options.headers.allow).to.equal('GET, HEAD, POST, OPTIONS');
      expect(options.headers).not.to.have.property('access-control-allow-origin');
      const head = await send(api.port, 'HEAD', '/version');
      expect(head.status).to.equal(200);
      expect(head.type).to.equal('application/json');
      expect(head.text).to.equal('');
    });
  });

  describe('request bodies', () => {
    it('refuses a body without a Content-Type with 415 naming the accepted types, publishing nothing', async () => {
      const before = await repositoryState(api.port);
      for (const body of ['id: sneaky\ntype: metronome\nconfig: {interval: 5}\n', onramp('sneaky')]) {
        const reply = await send(api.port, 'POST', '/onramp', { body });
        expect(reply.status).to.equal(415);
        expect(reply.body).to.deep.equal({
          error: 'a request body needs a Content-Type: application/json or application/yaml (also application/x-yaml, text/yaml)',
        });
      }
      const plain = await send(api.port, 'POST', '/onramp', { headers: { 'content-type': 'text/plain' }, body: onramp('sneaky') });
      expect(plain.status).to.equal(415);
      expect((plain.body as { error: string }).error).to.equal(
        "Content-Type 'text/plain' is not supported: use application/json or application/yaml (also application/x-yaml, text/yaml)",
      );
      expect(await repositoryState(api.port)).to.deep.equal(before);
    });

    it('refuses a form-like body also where the operation takes none: no activation by a cross-site form post', async () => {
      expect((await send(api.port, 'POST', '/onramp', { headers: JSON_HEADERS, body: onramp('tick') })).status).to.equal(201);
      for (const headers of [{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }] as Record<string, string>[]) {
        const reply = await send(api.port, 'POST', '/onramp/tick/one', { headers, body: 'a=b' });
        expect(reply.status).to.equal(415);
      }
      expect((await send(api.port, 'GET', '/onramp/tick')).body).to.deep.equal({ artefact: JSON.parse(onramp('tick')), instances: [] });
      // a JSON body there is read as nothing, as before
      expect((await send(api.port, 'POST', '/onramp/tick/one', { headers: JSON_HEADERS, body: '{}' })).status).to.equal(201);
      expect((await send(api.port, 'DELETE', '/onramp/tick/one')).status).to.equal(200);
      expect((await send(api.port, 'DELETE', '/onramp/tick')).status).to.equal(200);
    });

    it('takes every YAML name and parameters such as charset', async () => {
      for (const [i, type] of ['application/yaml', 'application/x-yaml', 'text/yaml; charset=utf-8', 'Application/JSON; charset=UTF-8'].entries()) {
        const id = `r${'abcd'[i]}`;
        const body = type.startsWith('Application') ? onramp(id) : `id: ${id}\ntype: metronome\nconfig: {interval: 5}\n`;
        const reply = await send(api.port, 'POST', '/onramp', { headers: { 'content-type': type }, body });
        expect(reply.status, type).to.equal(201);
        expect((await send(api.port, 'DELETE', `/onramp/${id}`)).status).to.equal(200);
      }
    });

    it('refuses a publish with an empty body with 400, and activates a binding with no body and no Content-Type', async () => {
      const empty = await send(api.port, 'POST', '/onramp', { headers: JSON_HEADERS, body: '  ' });
      expect(empty.status).to.equal(400);
      expect(empty.body).to.deep.equal({ error: 'body: missing: POST /onramp needs the onramp to publish' });
      const binding = { id: 'flow', links: { '/onramp/tick/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } };
      expect((await send(api.port, 'POST', '/onramp', { headers: JSON_HEADERS, body: onramp('tick') })).status).to.equal(201);
      expect((await send(api.port, 'POST', '/binding', { headers: JSON_HEADERS, body: JSON.stringify(binding) })).status).to.equal(201);
      const badParams = await send(api.port, 'POST', '/binding/flow/one', { headers: JSON_HEADERS, body: '{"instance": 1}' });
      expect(badParams.status).to.equal(400);
      expect(badParams.body).to.deep.equal({ error: 'body.instance: must be string' });
      const activated = await send(api.port, 'POST', '/binding/flow/one');
      expect(activated.status, activated.text).to.equal(201);
      expect((await send(api.port, 'DELETE', '/binding/flow/one')).status).to.equal(200);
      expect((await send(api.port, 'DELETE', '/binding/flow')).status).to.equal(200);
      expect((await send(api.port, 'DELETE', '/onramp/tick')).status).to.equal(200);
    });
  });

  describe('Accept', () => {
    const cases: [string, string, number, string][] = [
      ['application/yaml;q=0, application/json', '/onramp', 200, 'application/json'],
      ['application/json;q=0.5, application/yaml', '/onramp', 200, 'application/yaml'],
      ['application/json;q=0.5, application/yaml;q=0.4', '/onramp', 200, 'application/json'],
      ['*/*', '/onramp', 200, 'application/json'],
      ['*/*;q=0.1, application/x-yaml', '/onramp', 200, 'application/x-yaml'],
      ['text/*', '/onramp', 200, 'text/yaml'],
      ['application/*;q=0.2, application/yaml;q=0, application/json;q=0', '/onramp', 200, 'application/x-yaml'],
      ['text/html', '/onramp', 200, 'application/json'],
      ['application/yaml', '/version', 200, 'application/json'],
      ['application/json;q=0', '/onramp', 406, 'application/json'],
      ['*/*;q=0', '/onramp', 406, 'application/json'],
      ['application/json;q=0, application/yaml', '/version', 406, 'application/json'],
      ['application/json;q=bogus', '/onramp', 200, 'application/json'],
    ];
    for (const [accept, path, status, type] of cases) {
      it(`answers GET ${path} with Accept '${accept}': ${status} ${type}`, async () => {
        const reply = await send(api.port, 'GET', path, { headers: { accept } });
        expect(reply.status).to.equal(status);
        expect(reply.type).to.equal(type);
        if (status === 406) {
          expect((reply.body as { error: string }).error).to.match(new RegExp(`^Accept '.*' refuses application/json and accepts none of the other types`));
        }
      });
    }

    it('negotiates by specificity, then q, then the server order', () => {
      const offers = ['application/json', 'application/yaml'];
      expect(negotiate(undefined, offers)).to.equal('application/json');
      expect(negotiate('', offers)).to.equal('application/json');
      expect(negotiate('application/yaml, */*;q=0.9', offers)).to.equal('application/yaml');
      expect(negotiate('APPLICATION/YAML;q=1.0', offers)).to.equal('application/yaml');
      expect(negotiate('*/*;q=0.5, application/json;q=0.4', offers)).to.equal('application/yaml');
      expect(negotiate('*/json', offers)).to.equal('application/json'); // malformed: ignored, then nothing matches
      expect(negotiate('application/json;q=0, */*', offers)).to.equal('application/yaml');
      expect(negotiate('application/json;q=0', offers)).to.equal(undefined);
    });

    it('does not run an operation whose answer the client refuses', async () => {
      const before = await repositoryState(api.port);
      const reply = await send(api.port, 'POST', '/onramp', { headers: { ...JSON_HEADERS, accept: 'application/json;q=0' }, body: onramp('refused') });
      expect(reply.status).to.equal(406);
      expect(await repositoryState(api.port)).to.deep.equal(before);
    });
  });
});
