import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { exampleCopy } from '../../helpers/examples';
import { runExample } from '../example-runner';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { curl, freePort, targetServer, type TargetServer } from './helpers';
import { execFile } from 'node:child_process';
import { docBlock } from '../../helpers/readme';
import { peer } from '../../helpers/peers';

describe('rest end to end', () => {
  let rt: Started | undefined;
  let server: TargetServer | undefined;
  let blocker: Server | undefined;
  afterEach(async () => {
    await rt?.stop();
    await server?.close();
    if (blocker) await new Promise((r) => blocker!.close(r));
    rt = server = blocker = undefined;
  });

  it('published over the REST API: curl -> rest onramp -> pipeline -> rest offramp -> an HTTP server, $request relayed', async () => {
    rt = await startRuntime();
    server = await targetServer();
    const port = await freePort();
    const artefacts: [string, unknown][] = [
      ['onramp', { id: 'web', type: 'rest', config: { host: '127.0.0.1', port } }],
      ['offramp', { id: 'hook', type: 'rest', config: { endpoint: `http://127.0.0.1:${server.port}/hook`, headers: { 'content-type': 'application/yaml' } } }],
      [
        'binding',
        {
          id: 'relay',
          links: {
            '/onramp/web/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
            '/pipeline/system::passthrough/{instance}/out': ['/offramp/hook/{instance}/in'],
          },
        },
      ],
    ];
    for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
    expect((await call(rt.base, 'POST', '/binding/relay/one')).status).to.equal(201);

    const answers = [
      await curl(`http://127.0.0.1:${port}/a`, ['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', '{"n":1,"tags":["x"]}']),
      await curl(`http://127.0.0.1:${port}/b`, ['-X', 'POST', '-H', 'Content-Type: text/plain', '--data-binary', 'plain words']),
      await curl(`http://127.0.0.1:${port}/c`), // a GET without a body: data null
    ];
    expect(answers.map((a) => a.status)).to.deep.equal([202, 202, 202]);
    await eventually(() => server!.received.length === 3, 5000, 'three requests at the server');
    // the onramp's $request (method, headers) overrides the offramp's config, so method and Content-Type are relayed;
    // the config's Content-Type stays where the request had none
    expect(server.received.map((r) => [r.method, r.url, r.headers['content-type'], r.body])).to.deep.equal([
      ['POST', '/hook', 'application/json', '{"n":1,"tags":["x"]}'],
      ['POST', '/hook', 'text/plain', 'plain words'],
      ['GET', '/hook', 'application/yaml', ''],
    ]);
    // the connection's own headers are not relayed
    expect(server.received.map((r) => r.headers.host)).to.deep.equal(Array(3).fill(`127.0.0.1:${server.port}`));
    expect(server.received[1].headers['user-agent']).to.match(/^curl/);

    // deactivating releases the onramp's port
    expect((await call(rt.base, 'DELETE', '/binding/relay/one')).status).to.equal(200);
    const refused = await curl(`http://127.0.0.1:${port}/a`).then(
      () => 'answered',
      (err: unknown) => (err as Error).message,
    );
    expect(refused).to.match(/curl .* failed/);
  });

  it('a port in use fails the activation with a 400 naming the onramp', async () => {
    rt = await startRuntime();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    await call(rt.base, 'POST', '/onramp', { body: { id: 'web', type: 'rest', config: { host: '127.0.0.1', port } } });
    await call(rt.base, 'POST', '/binding', { body: { id: 'b', links: { '/onramp/web/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } } });
    const answer = await call(rt.base, 'POST', '/binding/b/one');
    expect(answer.status).to.equal(400);
    expect(answer.text).to.match(/onramp 'web' \(rest\) cannot start: .*EADDRINUSE/);
  });

  it("examples/rest.yaml answers examples/README.md's curl line with its own body, status 201 and the path", async function () {
    this.timeout(20000);
    const [start, request] = docBlock('examples/README.md', '# Examples', 'sh').trim().split('\n');
    // the block's first line is what the test runs, with the example's port 8180 made 0 (the onramp logs the port it bound)
    expect(start).to.equal('npm start -- -f examples/rest.yaml --no-api &');
    const eddy = runExample(exampleCopy('rest.yaml', { 8180: 0 }));
    let code: number | null;
    try {
      const [, port] = await eddy.logged(/Onramp \S*\/onramp\/web\/main listening on http:\/\/127\.0\.0\.1:(\d+)\//);
      expect(request.startsWith('curl ')).to.equal(true);
      const line = request.replace(/^curl /, `${peer('curl')} -s -m 10 `).replace('127.0.0.1:8180/', `127.0.0.1:${port}/`);
      expect(line, "the block's request names the example's port").to.include(`127.0.0.1:${port}/greet`);
      const answer = await new Promise<string>((resolve, reject) =>
        execFile('sh', ['-c', line], (err, stdout) => (err ? reject(new Error(err.message)) : resolve(stdout))),
      );
      const [head, body] = answer.split('\r\n\r\n');
      expect(head).to.match(/^HTTP\/1\.1 201 /);
      expect(head.toLowerCase()).to.include('x-echo-path: /greet');
      expect(JSON.parse(body)).to.deep.equal({ hello: 'world' });
    } finally {
      code = await eddy.stop();
    }
    expect(code, eddy.stderr()).to.equal(0);
  });
});
