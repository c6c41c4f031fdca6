import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { EDDY } from '../../helpers/cli';
import { eventually } from '../../helpers/runtime';
import { requireService, type ServiceAddress } from '../../helpers/services';
import { amqpAddr, TestClient, unique, type Received } from './helpers';

/** An `eddy server run -f FILE --no-api` child; its stderr is kept for a failure message. */
function eddy(file: string): { child: ChildProcess; stderr(): string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [EDDY, 'server', 'run', '-f', file, '--no-api'], {
    env: { ...process.env, EDDY_LOG: 'error' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

/**
 * At least once across a crash: an eddy process copying a queue to another
 * is killed with SIGKILL while messages are in flight; a second one takes
 * over, and every message arrives. Duplicates (messages the first process
 * had copied but not yet acked) are counted and reported.
 *
 * To make "in flight" certain rather than likely, the output queue takes
 * only 200 messages (further publishes are refused, so the first process
 * keeps failing, requeueing and retrying a prefetch window of messages):
 * the kill comes while that window is unacked. The test then makes room
 * and starts the second process.
 */
describe('amqp at least once: an eddy process killed mid-stream (real RabbitMQ)', function () {
  this.timeout(60_000);
  let server: ServiceAddress;
  let client: TestClient;
  let dir: string;
  const children: ChildProcess[] = [];

  before(async function () {
    server = await requireService(this, 'rabbitmq');
  });
  beforeEach(async () => {
    client = await TestClient.open(server);
    dir = mkdtempSync(join(tmpdir(), 'eddy-amqp-kill-'));
  });
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loses nothing when a consumer is killed with SIGKILL and restarted: unacked messages are redelivered', async () => {
    const N = 1000;
    const CAPACITY = 200;
    const input = await client.queue(unique('in'), { durable: true });
    const outputName = unique('out');
    let output = await client.queue(outputName, { durable: false, maxLength: CAPACITY, arguments: { 'x-overflow': 'reject-publish' } });
    const file = join(dir, 'copy.yaml');
    writeFileSync(
      file,
      stringify({
        onramp: [{ id: 'rabbit_in', type: 'amqp', config: { amqp_addr: amqpAddr(server), queue_name: input, queue_options: { durable: true }, prefetch: 32 } }],
        offramp: [{ id: 'rabbit_out', type: 'amqp', config: { amqp_addr: amqpAddr(server), routing_key: output } }],
        binding: [
          {
            id: 'copy',
            links: {
              '/onramp/rabbit_in/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
              '/pipeline/system::passthrough/{instance}/out': ['/offramp/rabbit_out/{instance}/in'],
            },
          },
        ],
        mapping: { '/binding/copy/main': { instance: 'main' } },
      }),
    );
    await client.publish(
      '',
      input,
      Array.from({ length: N }, (_, n) => JSON.stringify({ n })),
      { persistent: true },
    );

    const first = eddy(file);
    children.push(first.child);
    await eventually(
      async () => (await client.depth(output)).messageCount === CAPACITY,
      30_000,
      `the first process to fill the output queue (${CAPACITY})`,
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${first.stderr()}`);
    });
    first.child.kill('SIGKILL');
    await first.exited;

    // room for everything: what arrived so far is kept, the queue is declared again without a limit
    const received: Received[] = await client.drain(output);
    await client.deleteQueue(output);
    output = await client.queue(outputName, { durable: false });

    const after = await client.collect(output);
    const second = eddy(file);
    children.push(second.child);
    const distinct = () => new Set([...received, ...after.received].map((m) => m.body)).size;
    await eventually(() => distinct() === N, 30_000, `all ${N} messages (the second process)`).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}: ${distinct()} distinct\n${second.stderr()}`);
    });
    // every message copied is acked: once the input queue is empty and the process is stopped, nothing comes back
    await eventually(async () => (await client.depth(input)).messageCount === 0, 30_000, 'an empty input queue');
    second.child.kill('SIGTERM');
    expect(await second.exited).to.equal(0);
    await after.stop();
    received.push(...after.received, ...(await client.drain(output)));
    expect((await client.depth(input)).messageCount, 'messages returned to the input queue unacked').to.equal(0);

    const ns = new Set(received.map((m) => (JSON.parse(m.body) as { n: number }).n));
    expect(ns.size).to.equal(N);
    expect(Math.min(...ns)).to.equal(0);
    expect(Math.max(...ns)).to.equal(N - 1);
    const duplicates = received.length - N;
    console.log(`      amqp at-least-once: ${N} messages, SIGKILL with ${CAPACITY} copied; ${received.length} received, ${duplicates} duplicates, none lost`);
  });
});
