/**
 * The project's own broker (scripts/services) stopped and started again
 * while eddy relays one topic into another: the offramp's failed writes
 * trigger the circuit breaker, the onramp stops reading and fails back to
 * its committed offsets, and once the broker is back everything resumes
 * and every event arrives.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger, type Logger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { requireService, serviceAddress } from '../../helpers/services';
import { Peer, brokerOf, tail, unique } from './helpers';

const SERVICES = join(__dirname, '../../../../scripts/services');
const run = promisify(execFile);
const services = (action: 'start' | 'stop' | 'status') => run('bash', [SERVICES, action, 'kafka'], { timeout: 120000 });

describe('kafka: the broker restarts while eddy relays', function () {
  this.timeout(120000);
  let broker: string;
  let peer: Peer | undefined;
  let runtime: Runtime | undefined;
  let closeTail: (() => Promise<void>) | undefined;

  before(async function () {
    broker = brokerOf(await requireService(this, 'kafka'));
    const ours = await services('status').then(
      () => true,
      () => false,
    );
    const { host, port } = serviceAddress('kafka');
    if (!ours || host !== '127.0.0.1' || port !== 9092) {
      // eslint-disable-next-line no-console
      console.warn('skipped: the broker is not the one scripts/services runs, so this test cannot restart it');
      this.skip();
    }
    peer = new Peer(broker);
  });
  after(async function () {
    this.timeout(120000);
    await runtime?.shutdown();
    await closeTail?.();
    await peer?.close();
    // whatever happened, leave the broker running
    if (peer) await services('start');
  });

  it('triggers the breaker while the broker is down and relays every event once it is back', async () => {
    const input = unique('restart-in');
    const output = unique('restart-out');
    await peer!.createTopic(input, 2);
    await peer!.createTopic(output);
    const sent = Array.from({ length: 20000 }, (_, n) => JSON.stringify({ n }));
    await peer!.produce(input, sent.map((value) => ({ value })));
    const out = await tail(peer!, output);
    closeTail = out.close;

    // what the connectors log about the outage, beside the usual (quiet) logger
    const quiet = createLogger(process.env.EDDY_TEST_LOG ?? 'silent');
    const said: string[] = [];
    const logger: Logger = { ...quiet, warn: (m, f) => (said.push(m), quiet.warn(m, f)), info: (m, f) => (said.push(m), quiet.info(m, f)) };
    runtime = new Runtime({ logger });
    await runtime.start();
    runtime.publish('onramp', {
      id: 'in',
      type: 'kafka',
      config: {
        group_id: unique('restart'),
        topics: [input],
        brokers: [broker],
        rdkafka_options: { 'enable.auto.commit': 'false', 'auto.offset.reset': 'earliest', 'session.timeout.ms': '6000' },
      },
    });
    runtime.publish('offramp', { id: 'out', type: 'kafka', config: { topic: output, brokers: [broker] } });
    runtime.publish('binding', {
      id: 'relay',
      links: {
        '/onramp/in/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
        '/pipeline/system::passthrough/{instance}/out': ['/offramp/out/{instance}/in'],
      },
    });
    await runtime.activate('binding', 'relay', 'main');
    const onramp = runtime.onramp('/onramp/in/main')!.runtime;

    await eventually(() => out.values.length >= 500, 30000, 'relaying');
    await services('stop');
    // writes in flight fail: the offramp holds the breaker of the onramp feeding it until the brokers answer
    await eventually(() => said.some((m) => m.includes('/offramp/out/main: the brokers cannot be reached')), 30000, 'the offramp to notice');
    expect(onramp.breaker.isOpen).to.equal(false);
    expect(onramp.breaker.holders()).to.include('/offramp/out/main');
    await services('start');
    await eventually(() => new Set(out.values).size === sent.length, 60000, `all ${sent.length} events in ${output}`);
    expect(new Set(out.values)).to.deep.equal(new Set(sent));
    // restored once the brokers answered again
    expect(said.some((m) => m.includes('/offramp/out/main: the brokers answer again'))).to.equal(true);
    await eventually(() => onramp.breaker.isOpen, 30000, 'the breaker restored');
    const duplicates = out.values.length - sent.length;
    // eslint-disable-next-line no-console
    console.log(`      broker restarted: ${sent.length} events, ${duplicates} duplicates, none lost`);
  });
});
