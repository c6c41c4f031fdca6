import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credsAuthenticator, nkeys } from '@nats-io/nats-core';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { Collector, PrivateServer, client, directOfframp, directOnramp, event, kinds, waitForSubscribers } from './helpers';

/**
 * The connection options against nats-servers of the test's own that
 * demand them: a token, a user and password, mutual TLS with a CA of the
 * test's own (made with openssl), and a credentials file (operator, account
 * and user JWTs signed with nkeys, as `nsc` would write them).
 */

const text = (s: string) => new TextEncoder().encode(s);

/** A message through eddy's onramp, published by a peer with the same credentials. */
async function roundTrip(server: PrivateServer, options: Record<string, unknown>, peerOptions: Record<string, unknown>, host = server.host): Promise<void> {
  const ramp = await directOnramp({ hosts: [host], subject: 'auth.in', options });
  const peer = await client(host, peerOptions);
  try {
    await waitForSubscribers(server.monitor, 'auth.in', 1);
    peer.publish('auth.in', text('{"ok":true}'));
    await eventually(() => ramp.events.length === 1, 10000, 'the event');
    expect(ramp.events[0].data).to.deep.equal({ ok: true });
  } finally {
    await peer.close();
    await ramp.stop();
  }
}

const refusal = (config: Record<string, unknown>) =>
  directOnramp(config).then(
    async (r) => {
      await r.stop();
      return 'connected';
    },
    (e: unknown) => (e as Error).message,
  );

describe('nats connection options (private nats-servers that demand them)', function () {
  this.timeout(30000);
  let server: PrivateServer | undefined;
  let dir: string;

  before(async function () {
    // the shared service is not used, but its start installs nats-server (and openssl)
    await requireService(this, 'nats');
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-nats-auth-'));
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('token: connects with the right one; a wrong one fails create() naming the cause', async () => {
    server = await PrivateServer.start({ args: ['--auth', 's3cret'] });
    await roundTrip(server, { token: 's3cret' }, { token: 's3cret' });
    const wrong = await refusal({ hosts: [server.host], subject: 'x', options: { token: 'wrong' } });
    expect(wrong).to.match(/cannot connect to NATS at 127\.0\.0\.1:\d+: .*Authorization Violation/i);
  });

  it('username and password, on both sides', async () => {
    server = await PrivateServer.start({ args: ['--user', 'eddy', '--pass', 'pa55'] });
    await roundTrip(server, { username: 'eddy', password: 'pa55' }, { user: 'eddy', pass: 'pa55' });
    const peer = await client(server.host, { user: 'eddy', pass: 'pa55' });
    const ramp = await directOfframp({ hosts: [server.host], subject: 'auth.out', options: { username: 'eddy', password: 'pa55', name: 'eddy-offramp' } });
    try {
      const got = new Collector(peer, 'auth.out');
      await peer.flush();
      ramp.send(event({ n: 1 }));
      await eventually(() => got.msgs.length === 1 && kinds(ramp.insights).includes('ack'), 10000, 'the message');
      const connz = (await (await fetch(`${server.monitor}/connz`)).json()) as { connections: { name?: string }[] };
      expect(connz.connections.map((c) => c.name)).to.include('eddy-offramp');
    } finally {
      await ramp.stop();
      await peer.close();
    }
    expect(await refusal({ hosts: [server.host], subject: 'x', options: { username: 'eddy', password: 'nope' } })).to.match(/Authorization Violation/i);
  });

  it('mutual TLS: root_cert verifies the server, cert_path/key_path identify the client; without them the connection is refused', async function () {
    if (!existsSync('/usr/bin/openssl')) {
      if (process.env.CI) throw new Error('openssl is not installed: scripts/services start nats installs it');
      this.skip();
    }
    const tls = makeCertificates(dir);
    server = await PrivateServer.start({ args: ['--tlsverify', '--tlscert', tls.serverCert, '--tlskey', tls.serverKey, '--tlscacert', tls.ca] });
    const mutual = { root_cert: tls.ca, cert_path: tls.clientCert, key_path: tls.clientKey };
    // by name: the certificate is for localhost (nats.js checks a certificate against the host name it dialed)
    const host = `localhost:${server.port}`;
    await roundTrip(server, mutual, { tls: { caFile: tls.ca, certFile: tls.clientCert, keyFile: tls.clientKey } }, host);
    // the server wants a client certificate
    expect(await refusal({ hosts: [host], subject: 'x', options: { root_cert: tls.ca } })).to.match(/cannot connect to NATS/);
    // tls: true alone verifies against the system CAs, which do not know this CA
    expect(await refusal({ hosts: [host], subject: 'x', options: { tls: true } })).to.match(/cannot connect to NATS.*(certificate|self.signed|issuer)/i);
    // a missing file is named
    expect(await refusal({ hosts: [host], subject: 'x', options: { ...mutual, key_path: join(dir, 'missing.key') } })).to.match(
      /options\.key_path: cannot read .*missing\.key/,
    );
  });

  it('tls: true against a server without TLS is refused, not silently downgraded', async () => {
    server = await PrivateServer.start();
    expect(await refusal({ hosts: [server.host], subject: 'x', options: { tls: true } })).to.match(/cannot connect to NATS/);
  });

  it('credentials_path: a user JWT and nkey seed file (operator mode) authenticates; a file of another user is refused', async () => {
    const op = nkeys.createOperator();
    const account = nkeys.createAccount();
    const user = nkeys.createUser();
    const opJwt = jwt(op, op.getPublicKey(), 'operator', { type: 'operator', version: 2 });
    const accountJwt = jwt(op, account.getPublicKey(), 'eddy-account', {
      limits: { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 },
      default_permissions: { pub: {}, sub: {} },
      type: 'account',
      version: 2,
    });
    const creds = (kp: NatsKeyPair, issuer: NatsKeyPair, file: string) => {
      const userJwt = jwt(issuer, kp.getPublicKey(), 'eddy-user', { pub: {}, sub: {}, subs: -1, data: -1, payload: -1, type: 'user', version: 2 });
      const seed = new TextDecoder().decode(kp.getSeed());
      const path = join(dir, file);
      writeFileSync(
        path,
        `-----BEGIN NATS USER JWT-----\n${userJwt}\n------END NATS USER JWT------\n\n` +
          `************************* IMPORTANT *************************\nNKEY Seed printed below can be used to sign and prove identity.\n\n` +
          `-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n\n*************************************************************\n`,
      );
      return path;
    };
    const good = creds(user, account, 'eddy.creds');
    // signed by an account the operator does not know
    const stranger = creds(nkeys.createUser(), nkeys.createAccount(), 'stranger.creds');
    server = await PrivateServer.start({
      jetstream: false, // JetStream in operator mode wants a system account; not what this test is about
      config: `operator: ${opJwt}\nresolver: MEMORY\nresolver_preload: {\n  ${account.getPublicKey()}: ${accountJwt}\n}\n`,
    });
    const { readFileSync } = await import('node:fs');
    await roundTrip(server, { credentials_path: good }, { authenticator: credsAuthenticator(readFileSync(good)) });
    expect(await refusal({ hosts: [server.host], subject: 'x', options: { credentials_path: stranger } })).to.match(
      /cannot connect to NATS.*Authorization Violation/i,
    );
  });
});

interface NatsKeyPair {
  getPublicKey(): string;
  getSeed(): Uint8Array;
  sign(data: Uint8Array): Uint8Array;
}

const b64url = (data: Uint8Array | string) => Buffer.from(data).toString('base64url');

/** A NATS v2 JWT (the ed25519-nkey algorithm) for `subject`, signed by `issuer`. */
function jwt(issuer: NatsKeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const claims = {
    jti: b64url(Buffer.from(`${subject}${Date.now()}`)).slice(0, 52),
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject,
    nats,
  };
  const body = `${header}.${b64url(JSON.stringify(claims))}`;
  return `${body}.${b64url(issuer.sign(new TextEncoder().encode(body)))}`;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, with openssl. */
function makeCertificates(dir: string) {
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('/usr/bin/openssl', args, { stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=eddy test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'));
  writeFileSync(f('server.ext'), 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n');
  writeFileSync(f('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const who of ['server', 'client']) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=eddy ${who}`, '-keyout', f(`${who}.key`), '-out', f(`${who}.csr`));
    ssl(
      'x509',
      '-req',
      '-in',
      f(`${who}.csr`),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      f(`${who}.ext`),
      '-out',
      f(`${who}.pem`),
    );
  }
  return { ca: f('ca.pem'), serverCert: f('server.pem'), serverKey: f('server.key'), clientCert: f('client.pem'), clientKey: f('client.key') };
}
