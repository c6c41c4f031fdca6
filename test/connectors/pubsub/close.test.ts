import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode } from '../../helpers/cli';
import { requireService } from '../../helpers/services';
import { PROJECT, TestClient, useEmulator } from './helpers';

const INDEX = join(__dirname, '../../../src/index.js');
const LOAD = join(__dirname, '../../../src/config/load.js');

/**
 * A pubsub onramp deactivated in the same turn as its activation must let go
 * of every connection, so that a process with nothing else to do exits by
 * itself. (The client's streaming pulls are gRPC calls started
 * asynchronously; a call cancelled before it started used to start anyway
 * and keep an HTTP/2 stream to the server open.)
 */
describe('pubsub onramp close (Pub/Sub fake pstest)', function () {
  this.timeout(60_000);
  let client: TestClient;
  let dir: string;

  before(async function () {
    useEmulator(await requireService(this, 'pubsub'));
    dir = mkdtempSync(join(tmpdir(), 'eddy-pubsub-close-'));
    client = new TestClient();
  });
  after(async () => {
    await client?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a runtime shut down right after activating it leaves no connection open: the process exits by itself', async () => {
    const { subscription } = await client.topicWithSubscription();
    const config = join(dir, 'flow.yaml');
    writeFileSync(
      config,
      [
        'onramp:',
        `  - {id: in, type: pubsub, config: {subscription: ${subscription}, project_id: ${PROJECT}}}`,
        'binding:',
        '  - id: flow',
        '    links:',
        "      '/onramp/in/{instance}/out': ['/pipeline/system::passthrough/{instance}/in']",
        "      '/pipeline/system::passthrough/{instance}/out': ['/offramp/system::stdout/system/in']",
        'mapping:',
        '  /binding/flow/main: {instance: main}',
        '',
      ].join('\n'),
    );
    const script = join(dir, 'activate-and-stop.js');
    writeFileSync(
      script,
      `const { Runtime, createLogger } = require(${JSON.stringify(INDEX)});
const { loadConfigFile } = require(${JSON.stringify(LOAD)});
(async () => {
  const runtime = await new Runtime({ logger: createLogger('silent') }).start();
  await loadConfigFile(runtime, ${JSON.stringify(config)});
  console.log('active: ' + runtime.list('binding').join(','));
  await runtime.shutdown();
  console.log('shut down');
})();
`,
    );
    // killed after 30 s: a connection left open keeps the child alive far longer (the pull's deadline is 30 min)
    const run = await runNode([script], { timeoutMs: 30_000 });
    expect(run.stdout, run.stderr).to.contain('active: flow').and.to.contain('shut down');
    expect(run.code, `the process did not exit by itself: ${run.stderr}`).to.equal(0);
  });
});
