/**
 * The REST API over TLS (`--api-tls-*`): the commands of docs/security.md
 * "TLS" run as written (but for the port: 0, and the port it got), mutual
 * TLS with curl, a certificate swapped on disk served without a restart,
 * and the start refused for a file that cannot be read.
 */
import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { EDDY, runEddy } from '../helpers/cli';
import { liveCopy, makeCerts, peerCertificate, swapIn, type TestCerts } from '../helpers/certs';
import { peer } from '../helpers/peers';
import { docBlock } from '../helpers/readme';
import { eventually } from '../helpers/runtime';

const TLS = '## TLS';
/** `eddy` as the docs write it, run from this checkout. */
const eddyCommand = `"${process.execPath}" "${EDDY}"`;

interface Shell {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `script` with sh in `cwd`; resolves with its exit code and output, whatever the code. */
function sh(script: string, cwd: string): Promise<Shell> {
  return new Promise((resolve) =>
    execFile('sh', ['-c', script], { cwd, timeout: 20_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    ),
  );
}

/** A running `eddy server run ARGS --api-port 0` (started by the test, stopped by it) and the port its API got. */
async function serve(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; port: number; stderr: () => string }> {
  const child = spawn(process.execPath, [EDDY, ...args, '--api-port', '0'], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  let port = 0;
  await eventually(
    () => {
      port = Number(/Listening at: https:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)?.[1] ?? 0);
      return port !== 0 || child.exitCode !== null;
    },
    15_000,
    'the API listening',
  );
  if (port === 0) throw new Error(`eddy exited ${child.exitCode}: ${stderr}`);
  return { child, port, stderr: () => stderr };
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('close', () => resolve());
    child.kill('SIGTERM');
  });

describe('API: TLS (--api-tls-*)', () => {
  let certs: TestCerts;
  let running: ChildProcess | undefined;

  before(() => (certs = makeCerts()));
  after(() => certs.remove());
  afterEach(async () => {
    if (running) await stop(running);
    running = undefined;
  });

  it("runs docs/security.md's commands: a self-signed certificate, the API on HTTPS, curl --cacert and eddy status with NODE_EXTRA_CA_CERTS", async () => {
    const dir = certs.dir;
    const made = await sh(docBlock('docs/security.md', TLS, 'sh', 0), dir);
    expect(made.code, made.stderr).to.equal(0);
    const [command, ...args] = docBlock('docs/security.md', TLS, 'sh', 1).trim().split(/\s+/);
    expect(command).to.equal('eddy');
    const api = await serve(args, dir);
    running = api.child;
    const [curlLine, statusLine] = docBlock('docs/security.md', TLS, 'sh', 2).trim().split('\n');
    const curl = await sh(curlLine.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${api.port}`).replace(/^curl /, `${peer('curl')} -sS `), dir);
    expect(curl.code, curl.stderr).to.equal(0);
    expect(JSON.parse(curl.stdout)).to.have.property('version');
    const status = await sh(statusLine.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${api.port}`).replace(' eddy ', ` ${eddyCommand} `), dir);
    expect(status.code, status.stderr).to.equal(0);
    // the same request without the CA is refused by curl: the certificate is the one made above
    expect((await sh(`${peer('curl')} -sS https://127.0.0.1:${api.port}/version`, dir)).code).to.equal(60);
  });

  it('with --api-tls-ca and --api-tls-require-client-cert, refuses a client without a certificate by the CA', async () => {
    const api = await serve(
      ['server', 'run', '--api-tls-cert', certs.server.cert, '--api-tls-key', certs.server.key, '--api-tls-ca', certs.ca, '--api-tls-require-client-cert'],
      certs.dir,
    );
    running = api.child;
    const url = `https://127.0.0.1:${api.port}/version`;
    const curl = `${peer('curl')} -sS -m 10 --cacert ${certs.ca}`;
    // refused in the handshake: an alert (35), an empty reply (52) or a reset (56), as TLS 1.3's timing falls
    expect([35, 52, 56]).to.include((await sh(`${curl} ${url}`, certs.dir)).code);
    const mutual = await sh(`${curl} --cert ${certs.client.cert} --key ${certs.client.key} ${url}`, certs.dir);
    expect(mutual.code, mutual.stderr).to.equal(0);
    expect(JSON.parse(mutual.stdout)).to.have.property('version');
  });

  it('serves a certificate swapped on disk to new connections, without a restart', async () => {
    const live = liveCopy(certs, 'api-live');
    const api = await serve(['server', 'run', '--api-tls-cert', live.cert, '--api-tls-key', live.key], certs.dir);
    running = api.child;
    expect((await peerCertificate(api.port, certs.ca)).serialNumber).to.equal('1001');
    swapIn(certs, live);
    await eventually(async () => (await peerCertificate(api.port, certs.ca)).serialNumber === '1002', 15_000, 'the new certificate served');
    const after = await sh(`${peer('curl')} -sS --cacert ${certs.ca} https://127.0.0.1:${api.port}/version`, certs.dir);
    expect(after.code, after.stderr).to.equal(0);
  });

  it("answers http:// on its HTTPS port with 400 and the https:// URL to use, and warns at start of an expired certificate (naming the flag's file and its notAfter)", async () => {
    const api = await serve(['server', 'run', '--api-tls-cert', certs.expired.cert, '--api-tls-key', certs.expired.key], certs.dir, {
      ...process.env,
      EDDY_LOG: 'warn',
    });
    running = api.child;
    expect(api.stderr()).to.match(
      new RegExp(
        `^\\S+ WARN  API: the TLS certificate ${certs.expired.cert} expired on \\w+ +\\d+ [\\d:]+ \\d{4} GMT \\(its notAfter\\): clients refuse it$`,
        'm',
      ),
    );
    const plain = await sh(`${peer('curl')} -sS -i -m 10 http://127.0.0.1:${api.port}/version`, certs.dir);
    expect(plain.code, plain.stderr).to.equal(0);
    expect(plain.stdout).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(plain.stdout.slice(plain.stdout.indexOf('\r\n\r\n') + 4)).to.equal(`this port speaks HTTPS: use https://127.0.0.1:${api.port}/version\n`);
  });

  it('does not start with a certificate file it cannot read (exit 1, naming the flag), nor with a certificate without its key (exit 2)', async () => {
    const missing = join(certs.dir, 'missing.pem');
    const run = await runEddy(['server', 'run', '--api-port', '0', '--api-tls-cert', missing, '--api-tls-key', certs.server.key], { timeoutMs: 10_000 });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain(`error: --api-tls-cert: cannot read ${missing}: ENOENT`);
    expect(run.stderr).not.to.contain('Listening at');
    const alone = await runEddy(['server', 'run', '--api-port', '0', '--api-tls-cert', certs.server.cert], { timeoutMs: 10_000 });
    expect(alone.code).to.equal(2);
    expect(alone.stderr).to.contain('--api-tls-cert: needs --api-tls-key');
  });
});
