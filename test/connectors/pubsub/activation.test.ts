import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { consume, PROJECT, useEmulator, type Consumed } from './helpers';

/**
 * Activations of the pubsub onramp that must fail, each with a 400-class
 * error naming the onramp and the cause, within a bounded time: a missing
 * subscription (the Pub/Sub fake answers NOT_FOUND), no service, a service
 * that never answers, bad credentials files, impossible names.
 */
describe('pubsub onramp activation (Pub/Sub fake pstest)', function () {
  this.timeout(40_000);
  let server: ServiceAddress;
  let flow: Consumed | undefined;
  let dir: string;

  before(async function () {
    server = await requireService(this, 'pubsub');
    useEmulator(server);
    dir = mkdtempSync(join(tmpdir(), 'eddy-pubsub-'));
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  const config = (subscription: string, extra: Record<string, unknown> = {}) => ({ subscription, project_id: PROJECT, ...extra });

  let blackhole: Server | undefined;
  const sockets = new Set<Socket>();
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
    useEmulator(server);
    for (const s of sockets) s.destroy();
    await new Promise((r) => (blackhole ? blackhole.close(r) : r(undefined)));
    blackhole = undefined;
  });

  async function refusal(cfg: Record<string, unknown>): Promise<string> {
    try {
      flow = await consume(cfg);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('activated');
  }

  it('fails naming the onramp and the cause when the subscription does not exist', async () => {
    const message = await refusal(config('eddy-no-such-subscription'));
    expect(message).to.match(/onramp 'src' \(pubsub\) cannot start: cannot use subscription 'eddy-no-such-subscription': .*NOT_FOUND/);
  });

  it('fails when the service cannot be reached (nothing listens)', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as AddressInfo;
        probe.close(() => resolve(p));
      });
    });
    useEmulator({ host: '127.0.0.1', port });
    const message = await refusal(config('eddy-anything'));
    expect(message).to.match(/onramp 'src' \(pubsub\) cannot start: cannot use subscription 'eddy-anything': .*UNAVAILABLE/);
  });

  it('fails within a bounded time when the service accepts connections but never answers', async () => {
    blackhole = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => blackhole!.listen(0, '127.0.0.1', resolve));
    useEmulator({ host: '127.0.0.1', port: (blackhole.address() as AddressInfo).port });
    const message = await refusal(config('eddy-anything'));
    expect(message).to.match(/onramp 'src' \(pubsub\) cannot start: cannot use subscription 'eddy-anything': .*(DEADLINE_EXCEEDED|no answer within)/);
  });

  it('fails naming pem when the credentials file is missing, or is not a JSON key file', async () => {
    expect(await refusal(config('eddy-anything', { pem: join(dir, 'missing.json') }))).to.match(
      /cannot start: pem: cannot read the credentials file .*missing\.json/,
    );
    const pemFile = join(dir, 'key.pem');
    writeFileSync(pemFile, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
    expect(await refusal(config('eddy-anything', { pem: pemFile }))).to.match(
      /cannot start: pem: .*key\.pem is a PEM file; a credentials file is the service account's JSON key file/,
    );
    const noKey = join(dir, 'no-key.json');
    writeFileSync(noKey, JSON.stringify({ type: 'service_account', client_email: 'x@example.iam.gserviceaccount.com' }));
    expect(await refusal(config('eddy-anything', { pem: noKey }))).to.match(/cannot start: pem: the service-account file .*no-key\.json has no private_key/);
  });

  it('takes credentials that fetch their tokens from what the file names (external_account, impersonated) only with allow_external_credentials', async () => {
    const external = join(dir, 'external.json');
    writeFileSync(
      external,
      JSON.stringify({
        type: 'external_account',
        audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/pool/providers/provider',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: 'https://sts.googleapis.com/v1/token',
        credential_source: { file: join(dir, 'token') },
      }),
    );
    expect(await refusal(config('eddy-anything', { pem: external }))).to.match(
      /cannot start: pem: .*external\.json holds external_account credentials, which fetch their tokens from a command, file or URL the file names; set allow_external_credentials: true/,
    );
    const impersonated = join(dir, 'impersonated.json');
    writeFileSync(impersonated, JSON.stringify({ type: 'impersonated_service_account', source_credentials: {}, service_account_impersonation_url: '' }));
    expect(await refusal(config('eddy-anything', { pem: impersonated }))).to.match(/impersonated_service_account credentials, .*allow_external_credentials/);
    // with the opt-in the credentials pass and the client asks the service (which knows no such subscription)
    expect(await refusal(config('eddy-no-such-subscription', { pem: external, allow_external_credentials: true }))).to.match(
      /cannot use subscription 'eddy-no-such-subscription': .*NOT_FOUND/,
    );
    expect(await refusal(config('eddy-anything', { pem: impersonated, allow_external_credentials: true }))).to.match(
      /pem: .*impersonated\.json: impersonated_service_account credentials need source_credentials and a service_account_impersonation_url/,
    );
  });

  it('refuses at publish a subscription name that cannot be one, and a project that contradicts the full name', async () => {
    expect(await refusal(config('no'))).to.match(/subscription: 'no' is not a subscription id/);
    expect(await refusal({ subscription: 'projects/other-project/subscriptions/eddy-sub', project_id: PROJECT })).to.match(
      /subscription names project 'other-project' but project_id is 'eddy-test'/,
    );
  });
});
