/**
 * The tcp onramp over TLS, with `openssl s_client` as the client: lines
 * sent through it arrive decrypted; mutual TLS; a certificate swapped on
 * disk served to new connections.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { liveCopy, loggedPort, makeCerts, peerCertificate, swapIn, type Identity, type TestCerts } from '../../helpers/certs';
import { eventually } from '../../helpers/runtime';
import { receiver, recordingLogger, type Receiver } from '../net-helpers';

interface SClient {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `openssl s_client` to 127.0.0.1:port, verifying the server by `ca`
 * (-verify_return_error: an untrusted server ends it), sending `input`.
 * It closes the connection at the end of the input (-no_ign_eof), or with
 * `untilServerCloses` reads until the server ends it (-quiet alone), which
 * a refused client needs: TLS 1.3 sends the refusal after the client's half
 * of the handshake, so it may come after the input is sent.
 */
function sClient(port: number, ca: string, input: string, client?: Identity, untilServerCloses = false): Promise<SClient> {
  return new Promise((resolve, reject) => {
    const args = ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', '-CAfile', ca, '-verify_return_error', '-quiet'];
    if (!untilServerCloses) args.push('-no_ign_eof');
    if (client) args.push('-cert', client.cert, '-key', client.key);
    const child = spawn('openssl', args, { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    // never left behind: a client that the server wrongly keeps is ended (and the test fails on what it did not see)
    const killer = setTimeout(() => child.kill(), 10_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe('tcp onramp: TLS', () => {
  let certs: TestCerts;
  let flow: Receiver | undefined;
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
    flow = await receiver({ type: 'tcp', preprocessors: ['lines'], config: { port: 0, tls } }, { logger });
    return loggedPort(logger.lines);
  };

  it('takes the lines openssl s_client sends over TLS, decrypted, the last one without a newline included', async () => {
    const port = await start(live);
    const run = await sClient(port, certs.ca, '{"n":1}\n{"n":2}\n{"n":3}');
    expect(run.stderr).to.not.match(/verify error/);
    await eventually(() => flow!.collected.out.length === 3, 5000, 'three lines');
    expect(flow!.collected.out.map((e) => e.data)).to.deep.equal([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(flow!.collected.err).to.deep.equal([]);
  });

  it('with require_client_cert, refuses s_client without a certificate and takes its lines with one', async () => {
    const port = await start({ ...live, ca: certs.ca, require_client_cert: true });
    const refused = await sClient(port, certs.ca, '{"anonymous":true}\n', undefined, true);
    expect(refused.stderr).to.match(/alert certificate required/);
    const run = await sClient(port, certs.ca, '{"mutual":true}\n', certs.client);
    expect(run.stderr).to.not.match(/alert/);
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the line of the client with a certificate');
    expect(flow!.collected.out.map((e) => e.data)).to.deep.equal([{ mutual: true }]);
  });

  it('serves a certificate swapped on disk to new connections, without a restart', async () => {
    const port = await start(live);
    expect((await peerCertificate(port, certs.ca)).serialNumber).to.equal('1001');
    swapIn(certs, live);
    await eventually(async () => (await peerCertificate(port, certs.ca)).serialNumber === '1002', 15000, 'the new certificate served');
    await sClient(port, certs.ca, '{"after":"swap"}\n');
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the line sent after the swap');
  });
});
