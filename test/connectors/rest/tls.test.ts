/**
 * The rest onramp over TLS, with curl as the client (--cacert, and --cert
 * for mutual TLS) against certificates made by openssl for the test; a
 * certificate swapped on disk served without a restart; a 400 at publish
 * for a file that is missing or is no certificate.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { peer } from '../../helpers/peers';
import { liveCopy, loggedPort, makeCerts, peerCertificate, swapIn, type Identity, type TestCerts } from '../../helpers/certs';
import { call, eventually, startRuntime } from '../../helpers/runtime';
import { receiver, recordingLogger, type Receiver } from '../net-helpers';
import { curl } from './helpers';

/** curl's exit code and stderr for a request that is expected to fail (a TLS refusal). */
function curlFails(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(peer('curl'), ['-s', '-S', '-m', '10', ...args], (err, _stdout, stderr) => {
      if (!err) return reject(new Error(`curl ${args.join(' ')} succeeded`));
      resolve({ code: (err as { code?: number }).code ?? -1, stderr });
    }),
  );
}

describe('rest onramp: TLS', () => {
  let certs: TestCerts;
  let flow: Receiver | undefined;
  /** the files the onramp is configured with: copies, so that a test can swap them */
  let live: Identity;

  before(() => (certs = makeCerts()));
  after(() => certs.remove());
  beforeEach(() => {
    live = liveCopy(certs);
  });
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  const start = async (tls: object) => {
    const logger = recordingLogger();
    flow = await receiver({ type: 'rest', config: { port: 0, tls } }, { logger });
    return loggedPort(logger.lines);
  };

  it('serves HTTPS: curl --cacert posts an event, whose $request.url says https; a client that does not trust the CA is refused', async () => {
    const port = await start(live);
    const answer = await curl(`https://localhost:${port}/ingest`, ['--cacert', certs.ca, '-H', 'content-type: application/json', '-d', '{"secure":true}']);
    expect(answer.status).to.equal(202);
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the event');
    const [event] = flow!.collected.out;
    expect(event.data).to.deep.equal({ secure: true });
    expect((event.meta.request as { url: { scheme: string; path: string } }).url).to.include({ scheme: 'https', path: '/ingest' });
    // curl's own CA store does not know the test CA: 60 is "peer certificate cannot be authenticated"
    expect((await curlFails([`https://localhost:${port}/`])).code).to.equal(60);
  });

  it('with require_client_cert, refuses a client without a certificate and takes one with a certificate by the CA', async () => {
    const port = await start({ ...live, ca: certs.ca, require_client_cert: true });
    const url = `https://localhost:${port}/`;
    // no HTTP answer at all: the server ends the connection in the handshake; TLS 1.3 tells the client after it sent its
    // part, so curl reports an alert (35), an empty reply (52) or a reset (56), as the timing falls
    const TLS_REFUSED = [35, 52, 56];
    expect(TLS_REFUSED).to.include((await curlFails(['--cacert', certs.ca, '-d', '{"anonymous":true}', url])).code);
    const stranger = ['--cert', certs.stranger.cert, '--key', certs.stranger.key];
    expect(TLS_REFUSED).to.include((await curlFails(['--cacert', certs.ca, ...stranger, '-d', '{"stranger":true}', url])).code);
    const answer = await curl(url, [
      '--cacert',
      certs.ca,
      '--cert',
      certs.client.cert,
      '--key',
      certs.client.key,
      '-H',
      'content-type: application/json',
      '-d',
      '{"mutual":true}',
    ]);
    expect(answer.status).to.equal(202);
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the event of the client with a certificate');
    expect(flow!.collected.out.map((e) => e.data)).to.deep.equal([{ mutual: true }]);
  });

  it('serves a certificate swapped on disk to new connections, without a restart', async () => {
    const port = await start(live);
    expect((await peerCertificate(port, certs.ca)).serialNumber).to.equal('1001');
    swapIn(certs, live);
    let subject = '';
    await eventually(
      async () => {
        const cert = await peerCertificate(port, certs.ca);
        subject = String(cert.subject.CN);
        return cert.serialNumber === '1002';
      },
      15000,
      'the new certificate served',
    );
    expect(subject).to.equal('eddy-server-2');
    const answer = await curl(`https://localhost:${port}/`, ['--cacert', certs.ca, '-H', 'content-type: application/json', '-d', '{"after":"swap"}']);
    expect(answer.status).to.equal(202);
  });

  it('answers http:// on its HTTPS port with 400 and the https:// URL to use, where it used to close the connection without a word', async () => {
    const port = await start(live);
    const answer = await curl(`http://localhost:${port}/ingest?x=1`, ['-H', 'content-type: application/json', '-d', '{"plain":true}']);
    expect(answer.status).to.equal(400);
    expect(answer.body).to.equal(`this port speaks HTTPS: use https://localhost:${port}/ingest?x=1\n`);
    expect(answer.headers.connection).to.equal('close');
    // the port still speaks TLS to the next client
    const secure = await curl(`https://localhost:${port}/ingest`, ['--cacert', certs.ca, '-H', 'content-type: application/json', '-d', '{"secure":true}']);
    expect(secure.status).to.equal(202);
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the HTTPS event');
    expect(flow!.collected.out.map((e) => e.data)).to.deep.equal([{ secure: true }]);
  });

  it('warns, naming the onramp, the file and its notAfter, when it starts with an expired certificate, and again when an expired one is reloaded', async () => {
    const logger = recordingLogger();
    flow = await receiver({ type: 'rest', config: { port: 0, tls: certs.expired } }, { logger });
    const warning = logger.lines.find((l) => l.startsWith('warn '));
    expect(warning).to.match(
      new RegExp(`^warn Onramp .*/onramp/.*: the TLS certificate ${certs.expired.cert} expired on \\w+ +\\d+ [\\d:]+ \\d{4} GMT \\(its notAfter\\)`),
    );
    await flow.stop();
    const reloading = recordingLogger();
    flow = await receiver({ type: 'rest', config: { port: 0, tls: live } }, { logger: reloading });
    expect(reloading.lines.filter((l) => l.startsWith('warn '))).to.deep.equal([]);
    copyFileSync(certs.expired.key, live.key);
    copyFileSync(certs.expired.cert, live.cert);
    await eventually(() => reloading.lines.some((l) => l.includes(`the TLS certificate ${live.cert} expired on`)), 15000, 'the warning on reload');
    expect(reloading.lines.find((l) => l.includes('expired on'))).to.match(/^warn Onramp /);
  });

  it('refuses at publish (400, naming the field) a missing file, a file that is no certificate, a key of another certificate, and require_client_cert without ca', async () => {
    const started = await startRuntime();
    try {
      const publish = (tls: Record<string, unknown>) => call(started.base, 'POST', '/onramp', { body: { id: 'tls', type: 'rest', config: { port: 0, tls } } });
      const missing = join(certs.dir, 'missing.key');
      let reply = await publish({ cert: certs.server.cert, key: missing });
      expect(reply.status).to.equal(400);
      expect(reply.body).to.deep.equal({ error: `config.tls.key: cannot read ${missing}: ENOENT: no such file or directory, open '${missing}'` });
      const notPem = join(certs.dir, 'not.pem');
      writeFileSync(notPem, 'hello\n');
      reply = await publish({ cert: notPem, key: certs.server.key });
      expect(reply.status).to.equal(400);
      expect((reply.body as { error: string }).error).to.match(new RegExp(`^config\\.tls\\.cert: ${notPem} is not a PEM certificate`));
      reply = await publish({ cert: certs.server.cert, key: certs.stranger.key });
      expect(reply.status).to.equal(400);
      expect((reply.body as { error: string }).error).to.match(
        new RegExp(`^config\\.tls\\.key: ${certs.stranger.key} is not the PEM private key of the certificate`),
      );
      reply = await publish({ cert: certs.server.cert, key: certs.server.key, ca: notPem });
      expect(reply.status).to.equal(400);
      expect(reply.body).to.deep.equal({ error: `config.tls.ca: ${notPem} holds no PEM certificate` });
      reply = await publish({ cert: certs.server.cert, key: certs.server.key, require_client_cert: true });
      expect(reply.status).to.equal(400);
      expect(reply.body).to.deep.equal({
        error: 'config.tls.require_client_cert: needs tls.ca, the CA certificates that client certificates are checked against',
      });
      expect((await call(started.base, 'GET', '/onramp')).body).to.not.include('tls');
    } finally {
      await started.stop();
    }
  });
});
