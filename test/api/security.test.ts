import { expect } from 'chai';
import { apiOptionsFromFlags, isLoopbackHost } from '../../src/api/options';
import { createApi } from '../../src/api/server';
import { parseRunArgs } from '../../src/cli/server-run';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { runEddy } from '../helpers/cli';
import { JSON_HEADERS, onramp, repositoryState, send, startApi, type Api } from './helpers';

describe('REST API access', () => {
  describe('with a token', () => {
    let api: Api;
    before(async () => (api = await startApi({ token: 's3cret-token' })));
    after(() => api.stop());

    it('answers 401 with WWW-Authenticate to every request without the token, on every path', async () => {
      for (const [method, path] of [
        ['GET', '/version'],
        ['GET', '/health'],
        ['GET', '/openapi.json'],
        ['GET', '/onramp'],
        ['DELETE', '/offramp/system::stdout'],
        ['GET', '/no/such/path'],
      ]) {
        const reply = await send(api.port, method, path);
        expect(reply.status, path).to.equal(401);
        expect(reply.headers['www-authenticate']).to.equal('Bearer realm="eddy"');
        expect(reply.body).to.deep.equal({ error: 'this API needs a token: send Authorization: Bearer <token>' });
      }
    });

    it('answers 401 naming invalid_token to a wrong token, and publishes nothing', async () => {
      for (const authorization of ['Bearer wrong', 'Bearer s3cret-token-and-more', 'Bearer s3cret-toke', 'Basic czNjcmV0LXRva2Vu', 's3cret-token', 'Bearer']) {
        const reply = await send(api.port, 'POST', '/onramp', { headers: { ...JSON_HEADERS, authorization }, body: onramp('intruder') });
        expect(reply.status, authorization).to.equal(401);
        expect(reply.headers['www-authenticate']).to.match(/^Bearer realm="eddy"/);
      }
      const wrong = await send(api.port, 'GET', '/onramp', { headers: { authorization: 'Bearer wrong' } });
      expect(wrong.headers['www-authenticate']).to.equal('Bearer realm="eddy", error="invalid_token"');
      expect(wrong.body).to.deep.equal({ error: 'the bearer token is wrong' });
      const list = await send(api.port, 'GET', '/onramp', { headers: { authorization: 'Bearer s3cret-token' } });
      expect(list.body).to.deep.equal([]);
    });

    it('serves a request with the right token (the scheme in any case)', async () => {
      const published = await send(api.port, 'POST', '/onramp', { headers: { ...JSON_HEADERS, authorization: 'bearer s3cret-token' }, body: onramp('tick') });
      expect(published.status).to.equal(201);
      const deleted = await send(api.port, 'DELETE', '/onramp/tick', { headers: { authorization: 'Bearer s3cret-token' } });
      expect(deleted.status).to.equal(200);
    });
  });

  describe('with a mixed-case base64 token', () => {
    // mixed case and the base64 characters + / =, as `openssl rand -base64 24` makes
    const TOKEN = 'Zk9+qR/xY2aBcD3eF+Gh/IjK0lMnOpQ=';
    let api: Api;
    before(async () => (api = await startApi({ token: TOKEN })));
    after(() => api.stop());

    const status = async (token: string) => (await send(api.port, 'GET', '/onramp', { headers: { authorization: `Bearer ${token}` } })).status;

    it('accepts the token exactly as it was given', async () => {
      expect(await status(TOKEN)).to.equal(200);
    });

    it('refuses it with 401 invalid_token when any letter has the other case: a token is compared byte for byte', async () => {
      const swapped = TOKEN.split('')
        .map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()))
        .join('');
      const oneLetter = TOKEN.replace('Zk9', 'zk9');
      for (const token of [TOKEN.toLowerCase(), TOKEN.toUpperCase(), swapped, oneLetter]) {
        const reply = await send(api.port, 'POST', '/onramp', { headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` }, body: onramp('intruder') });
        expect(reply.status, token).to.equal(401);
        expect(reply.headers['www-authenticate']).to.equal('Bearer realm="eddy", error="invalid_token"');
      }
      const list = await send(api.port, 'GET', '/onramp', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(list.body).to.deep.equal([]);
    });

    it('refuses the token with its base64 characters changed or dropped', async () => {
      for (const token of [TOKEN.replace(/\+/g, '-').replace(/\//g, '_'), TOKEN.replace(/=+$/, ''), encodeURIComponent(TOKEN)]) {
        expect(await status(token), token).to.equal(401);
      }
    });
  });

  describe('Host and Origin', () => {
    let api: Api;
    before(async () => (api = await startApi({ allowOrigins: ['http://ui.example:8080', 'https://eddy.example'] })));
    after(() => api.stop());

    it('refuses a foreign Host with 403 (DNS rebinding), whatever the method, and changes nothing', async () => {
      const before = await repositoryState(api.port);
      for (const host of ['attacker.example', `attacker.example:${api.port}`, `127.0.0.1:${api.port + 1}`, `evil@127.0.0.1:${api.port}`, '127.0.0.1']) {
        const reply = await send(api.port, 'POST', '/onramp', { headers: { ...JSON_HEADERS, host }, body: onramp('rebound') });
        expect(reply.status, host).to.equal(403);
        expect((reply.body as { error: string }).error).to.equal(
          // a Host with userinfo makes the suggested origin a URL with credentials, which every message masks
          `Host '${host}' is not this API's address; if it is a name of this server, allow it with --api-allow-origin http://${host.replace(/^[^@]*@/, '***@')}`,
        );
      }
      expect(await repositoryState(api.port)).to.deep.equal(before);
    });

    it("takes its own address, localhost, and the allowed origins' hosts as Host", async () => {
      for (const host of [`127.0.0.1:${api.port}`, `localhost:${api.port}`, `LOCALHOST:${api.port}`, 'ui.example:8080', 'eddy.example']) {
        expect((await send(api.port, 'GET', '/version', { headers: { host } })).status, host).to.equal(200);
      }
    });

    it('refuses a foreign Origin with 403 (cross-site requests), and publishes nothing', async () => {
      const before = await repositoryState(api.port);
      for (const origin of ['http://attacker.example', 'null', `https://127.0.0.1:${api.port}`, `http://localhost:${api.port + 1}`, 'http://ui.example:8081']) {
        const reply = await send(api.port, 'POST', '/onramp', { headers: { 'content-type': 'text/plain', origin }, body: 'id: x\ntype: metronome\n' });
        expect(reply.status, origin).to.equal(403);
        expect((reply.body as { error: string }).error).to.equal(`Origin '${origin}' is foreign to this API; allow it with --api-allow-origin ${origin}`);
      }
      expect(await repositoryState(api.port)).to.deep.equal(before);
    });

    it('serves its own origin without CORS headers, and an allowed one with them', async () => {
      const own = await send(api.port, 'GET', '/onramp', { headers: { origin: `http://localhost:${api.port}` } });
      expect(own.status).to.equal(200);
      expect(own.headers).not.to.have.property('access-control-allow-origin');
      const allowed = await send(api.port, 'GET', '/onramp', { headers: { origin: 'http://ui.example:8080' } });
      expect(allowed.status).to.equal(200);
      expect(allowed.headers['access-control-allow-origin']).to.equal('http://ui.example:8080');
      expect(allowed.headers.vary).to.equal('Origin');
    });

    it('answers the CORS preflight of an allowed origin with the methods of the path', async () => {
      const preflight = await send(api.port, 'OPTIONS', '/binding/flow/one', {
        headers: { origin: 'https://eddy.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
      });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers['access-control-allow-origin']).to.equal('https://eddy.example');
      expect(preflight.headers['access-control-allow-methods']).to.equal('POST, GET, HEAD, DELETE, OPTIONS');
      expect(preflight.headers['access-control-allow-headers']).to.equal('Authorization, Content-Type, Accept');
    });

    it('lets a preflight through a token (browsers send no credentials with it), and nothing else', async () => {
      const locked = await startApi({ token: 't', allowOrigins: ['http://ui.example:8080'] });
      try {
        const headers = { origin: 'http://ui.example:8080', 'access-control-request-method': 'GET' };
        expect((await send(locked.port, 'OPTIONS', '/onramp', { headers })).status).to.equal(204);
        expect((await send(locked.port, 'GET', '/onramp', { headers: { origin: 'http://ui.example:8080' } })).status).to.equal(401);
        expect((await send(locked.port, 'GET', '/onramp', { headers: { origin: 'http://attacker.example' } })).status).to.equal(403);
      } finally {
        await locked.stop();
      }
    });
  });

  describe('eddy server run', () => {
    it('parses the API flags into one place, leaving the other options as they were', () => {
      expect(
        parseRunArgs([
          '--api-token',
          'abc',
          '--api-allow-origin',
          'HTTP://UI.example:80/',
          '--api-allow-origin',
          'https://x.example',
          '--api-max-body',
          '2048',
          '--api-max-depth',
          '10',
          '--insecure',
        ]),
      ).to.deep.include({
        files: [],
        api: true,
        host: '127.0.0.1',
        port: 9898,
        apiFlags: { token: 'abc', allowOrigins: ['http://ui.example', 'https://x.example'], maxBodyBytes: 2048, maxDepth: 10, insecure: true },
      });
      expect(() => parseRunArgs(['--api-max-body', '1mb'])).to.throw('--api-max-body: not a whole number from 1 to 9007199254740991: 1mb');
      expect(() => parseRunArgs(['--api-max-depth', '1000'])).to.throw('--api-max-depth: not a whole number from 1 to 256: 1000');
      expect(() => parseRunArgs(['--api-max-depth'])).to.throw('--api-max-depth needs a value');
      expect(() => parseRunArgs(['--api-token', ''])).to.throw('--api-token: must not be empty');
      expect(() => parseRunArgs(['--api-allow-origin', 'http://x.example/path'])).to.throw(
        "--api-allow-origin: 'http://x.example/path' is not an origin like http://host:port (http or https, no path)",
      );
    });

    it('refuses a non-loopback host without a token unless --insecure, and takes the token from EDDY_API_TOKEN', () => {
      for (const host of ['0.0.0.0', '::', '192.0.2.10', 'eddy.example']) {
        expect(() => apiOptionsFromFlags({}, host, {}), host).to.throw(`--api-host ${host} is reachable from other machines`);
        expect(apiOptionsFromFlags({ insecure: true }, host, {}).token).to.equal(undefined);
        expect(apiOptionsFromFlags({}, host, { EDDY_API_TOKEN: 'from-env' }).token).to.equal('from-env');
        expect(apiOptionsFromFlags({ token: 'flag' }, host, { EDDY_API_TOKEN: 'from-env' }).token).to.equal('flag');
      }
      for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
        expect(isLoopbackHost(host), host).to.equal(true);
        expect(apiOptionsFromFlags({}, host, { EDDY_API_TOKEN: '' })).to.deep.include({ token: undefined, host });
      }
    });

    it('refuses a token that cannot be sent unchanged in a Bearer header (a space, a control or non-ASCII character), naming where it came from', () => {
      expect(() => parseRunArgs(['--api-token', 'two words'])).to.throw(
        '--api-token: must be visible ASCII without spaces, as it is sent in Authorization: Bearer <token>; it has a space at position 4',
      );
      expect(() => apiOptionsFromFlags({}, '127.0.0.1', { EDDY_API_TOKEN: 'geheim\u00e9' })).to.throw('EDDY_API_TOKEN: must be visible ASCII without spaces');
      expect(() => createApi(new Runtime({ logger: createLogger('silent') }), { token: 'tab\there' })).to.throw(
        'token: must be visible ASCII without spaces, as it is sent in Authorization: Bearer <token>; it has character U+0009 at position 4',
      );
      // every base64, base64url and hex character is fine
      expect(parseRunArgs(['--api-token', 'aZ09+/=-_.~']).apiFlags).to.deep.include({ token: 'aZ09+/=-_.~' });
    });

    it('exits 2 before starting anything when asked to bind 0.0.0.0 without a token', async () => {
      const run = await runEddy(['server', 'run', '--api-host', '0.0.0.0', '--api-port', '0'], { timeoutMs: 10_000 });
      expect(run.code).to.equal(2);
      expect(run.stderr).to.contain('error: --api-host 0.0.0.0 is reachable from other machines');
      expect(run.stderr).to.contain('set a token (--api-token or EDDY_API_TOKEN), or accept the risk with --insecure');
      expect(run.stderr).not.to.contain('Listening at');
    });

    it('runs with a token from the command line: 401 without it, 200 with it', async () => {
      let port = 0;
      const results: number[] = [];
      const run = await runEddy(['server', 'run', '--api-port', '0', '--api-token', 'cli-token'], {
        timeoutMs: 15_000,
        signalWhen: ({ stderr }) => {
          const match = /Listening at: http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
          if (!match || port !== 0) return results.length === 2;
          port = Number(match[1]);
          void (async () => {
            results.push((await send(port, 'GET', '/version')).status);
            results.push((await send(port, 'GET', '/version', { headers: { authorization: 'Bearer cli-token' } })).status);
          })();
          return false;
        },
      });
      expect(run.code, run.stderr).to.equal(0);
      expect(results).to.deep.equal([401, 200]);
    });
  });
});
