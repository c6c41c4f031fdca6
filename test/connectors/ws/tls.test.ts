/**
 * The ws onramp over TLS (wss://), with the `ws` package's client trusting
 * the test CA; mutual TLS with require_client_cert.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { loggedPort, makeCerts, type Identity, type TestCerts } from '../../helpers/certs';
import { eventually } from '../../helpers/runtime';
import { receiver, recordingLogger, type Receiver } from '../net-helpers';

/** Opens a wss:// client; resolves when open, rejects with the error that kept it from opening. */
function open(url: string, ca: string | undefined, client?: Identity): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, {
      ...(ca === undefined ? {} : { ca: readFileSync(ca) }),
      ...(client === undefined ? {} : { cert: readFileSync(client.cert), key: readFileSync(client.key) }),
    });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
    // a refusal after the handshake (TLS 1.3, client certificates) can come as a close without an error first
    socket.once('close', (code) => reject(new Error(`closed before it opened (${code})`)));
  });
}

describe('ws onramp: TLS', () => {
  let certs: TestCerts;
  let flow: Receiver | undefined;

  before(() => (certs = makeCerts()));
  after(() => certs.remove());
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  const start = async (tls: object) => {
    const logger = recordingLogger();
    flow = await receiver({ type: 'ws', config: { port: 0, tls } }, { logger });
    expect(
      logger.lines.some((l) => l.includes('listening on wss://')),
      'logged as wss://',
    ).to.equal(true);
    return loggedPort(logger.lines);
  };

  it('serves wss://: a client trusting the CA sends a message that becomes an event; one that does not is refused', async () => {
    const port = await start({ cert: certs.server.cert, key: certs.server.key });
    const socket = await open(`wss://localhost:${port}/`, certs.ca);
    socket.send('{"over":"wss"}');
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the event');
    expect(flow!.collected.out[0].data).to.deep.equal({ over: 'wss' });
    socket.close();
    let refusal: Error | undefined;
    await open(`wss://localhost:${port}/`, undefined).then(
      (s) => s.terminate(),
      (err: unknown) => (refusal = err as Error),
    );
    expect(refusal?.message).to.match(/self-signed certificate in certificate chain|unable to verify/);
  });

  it('with require_client_cert, refuses a client without a certificate and takes one with a certificate by the CA', async () => {
    const port = await start({ cert: certs.server.cert, key: certs.server.key, ca: certs.ca, require_client_cert: true });
    let refusal: Error | undefined;
    await open(`wss://localhost:${port}/`, certs.ca).then(
      (s) => s.terminate(),
      (err: unknown) => (refusal = err as Error),
    );
    expect(refusal, 'the client without a certificate').to.not.equal(undefined);
    const socket = await open(`wss://localhost:${port}/`, certs.ca, certs.client);
    socket.send('{"mutual":true}');
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the event of the client with a certificate');
    expect(flow!.collected.out.map((e) => e.data)).to.deep.equal([{ mutual: true }]);
    socket.close();
  });

  it('answers a ws:// client on its wss:// port with 400 and the wss:// URL to use, where it used to close the connection without a word', async () => {
    const port = await start({ cert: certs.server.cert, key: certs.server.key });
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const socket = new WebSocket(`ws://localhost:${port}/feed`);
      socket.once('unexpected-response', (_req, res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      socket.once('open', () => reject(new Error('opened over ws://')));
      socket.once('error', reject);
    });
    expect(answer).to.deep.equal({ status: 400, body: `this port speaks HTTPS: use wss://localhost:${port}/feed\n` });
  });
});
