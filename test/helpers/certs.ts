/**
 * Certificates for the TLS tests, made with openssl in a temp dir: a CA,
 * server certificates for localhost / 127.0.0.1 signed by it (each with the
 * serial asked for, so a test can tell which one a server presents), and a
 * client certificate for mutual TLS.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type PeerCertificate } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Identity {
  cert: string;
  key: string;
}

export interface TestCerts {
  dir: string;
  /** the CA's certificate file */
  ca: string;
  /** a server certificate (serial 0x1001, CN eddy-server-1) */
  server: Identity;
  /** another server certificate by the same CA (serial 0x1002, CN eddy-server-2), to swap in */
  server2: Identity;
  /** a client certificate by the same CA (CN eddy-client) */
  client: Identity;
  /** a certificate and key signed by nobody the servers trust (self-signed) */
  stranger: Identity;
  /** a server certificate by the same CA that expired the day before it was made (serial 0x1003, CN eddy-expired) */
  expired: Identity;
  remove(): void;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

/** Makes the CA and the certificates in a new temp dir. */
export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'eddy-tls-'));
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=eddy-test-ca', '-keyout', 'ca.key', '-out', 'ca.pem'], dir);
  const signed = (name: string, cn: string, serial: string, ext: string, days = '2'): Identity => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-set_serial',
        serial,
        '-days',
        days,
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.pem`,
      ],
      dir,
    );
    return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  };
  const serverExt = 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n';
  const server = signed('server', 'eddy-server-1', '0x1001', serverExt);
  const server2 = signed('server2', 'eddy-server-2', '0x1002', serverExt);
  // -1: its notAfter a day before its notBefore (now): expired from the start, whatever the clock
  const expired = signed('expired', 'eddy-expired', '0x1003', serverExt, '-1');
  const client = signed('client', 'eddy-client', '0x2001', 'extendedKeyUsage=clientAuth\n');
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=stranger', '-keyout', 'stranger.key', '-out', 'stranger.pem'], dir);
  return {
    dir,
    ca: join(dir, 'ca.pem'),
    server,
    server2,
    client,
    stranger: { cert: join(dir, 'stranger.pem'), key: join(dir, 'stranger.key') },
    expired,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Copies of the first server certificate and key (`NAME.pem`, `NAME.key`):
 * the files a listener is configured with, so that a test can swap the
 * second certificate in (`swapIn`) without touching the originals.
 */
export function liveCopy(certs: TestCerts, name = 'live'): Identity {
  const live = { cert: join(certs.dir, `${name}.pem`), key: join(certs.dir, `${name}.key`) };
  copyFileSync(certs.server.cert, live.cert);
  copyFileSync(certs.server.key, live.key);
  return live;
}

/** Writes the second server certificate over `live`: the key first, then the certificate (in between the pair does not match, and the old one stays served). */
export function swapIn(certs: TestCerts, live: Identity): void {
  copyFileSync(certs.server2.key, live.key);
  copyFileSync(certs.server2.cert, live.cert);
}

/** The certificate a TLS server on 127.0.0.1:port presents to a client that trusts `ca` (and sends `client`, if given). */
export function peerCertificate(port: number, ca: string, client?: Identity): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      ca: readFileSync(ca),
      ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
      // ALPN for the gRPC (HTTP/2) port, which refuses a client that offers none; an HTTP/1 server ignores it
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate();
      socket.destroy();
      resolve(cert);
    });
    socket.once('error', reject);
  });
}

/** The port a listener logged (`listening on https://127.0.0.1:PORT/`), for a config with port 0. */
export function loggedPort(lines: string[]): number {
  for (const line of lines) {
    const m = /listening on \w+:\/\/[^\s]*:(\d+)\//.exec(line);
    if (m) return Number(m[1]);
  }
  throw new Error(`no listening line among ${JSON.stringify(lines)}`);
}
