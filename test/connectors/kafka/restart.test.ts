/**
 * The output's broker stopped and started again while eddy relays one topic
 * into another: the offramp's failed writes trigger the circuit breaker, the
 * onramp stops reading and fails back to its committed offsets, and once the
 * broker is back everything resumes and every event arrives.
 *
 * The output's broker is a private Kafka of this test's own (own ports and
 * log directory, started by scripts/services.d/kafka.sh): the shared one,
 * which other suites and processes use, is never stopped. The input is on
 * the shared broker, so the test can give eddy more to relay while the
 * output's broker is down: sends are then sure to fail, however fast the
 * relay ran before (with everything on one broker, a fast relay could be
 * done before the broker stopped, and nothing failed).
 *
 * No wait here is a fixed time for the whole flow: a loaded machine makes
 * the stop, the start, the rejoins and the relay of 20,000 events slower
 * together. The relay is awaited while events keep arriving (whileArriving),
 * and fails only when none arrived for a minute, saying what the connectors
 * last logged.
 */
import { expect } from 'chai';
import { createLogger, type Logger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { PrivateService } from '../../helpers/private-service';
import { whileArriving } from '../../helpers/arriving';
import { eventually } from '../../helpers/runtime';
import { Peer, brokerOf, tail, unique, useSharedKafka } from './helpers';

describe("kafka: the output's broker restarts while eddy relays (a private Kafka)", function () {
  // the waits below are bounded each; this only catches a hang between them
  this.timeout(900_000);
  let kafka: PrivateService | undefined;
  let broker: string;
  let peer: Peer | undefined;
  let runtime: Runtime | undefined;
  let closeTail: (() => Promise<void>) | undefined;
  const shared = useSharedKafka();

  before(async function () {
    kafka = await PrivateService.start(this, 'kafka');
    broker = brokerOf(kafka.address);
    peer = new Peer(broker);
  });
  after(async function () {
    this.timeout(120000);
    await runtime?.shutdown();
    await closeTail?.();
    await peer?.close();
    await kafka?.dispose();
  });

  it('triggers the breaker while the broker is down and relays every event once it is back', async () => {
    const input = unique('restart-in');
    const output = unique('restart-out');
    await shared.peer.createTopic(input, 2);
    await peer!.createTopic(output);
    const sent = Array.from({ length: 20000 }, (_, n) => JSON.stringify({ n }));
    const produce = (values: string[]) =>
      shared.peer.produce(
        input,
        values.map((value) => ({ value })),
      );
    // a tenth before the stop, the rest while the output's broker is down
    await produce(sent.slice(0, 2000));
    const out = await tail(peer!, output);
    closeTail = out.close;

    // what the connectors log about the outage, beside the usual (quiet) logger
    const quiet = createLogger(process.env.EDDY_TEST_LOG ?? 'silent');
    const said: string[] = [];
    const logger: Logger = {
      ...quiet,
      error: (m, f) => (said.push(m), quiet.error(m, f)),
      warn: (m, f) => (said.push(m), quiet.warn(m, f)),
      info: (m, f) => (said.push(m), quiet.info(m, f)),
    };
    const state = () => `the connectors last said: ${said.slice(-5).join(' | ')}; the test's reader gave up: ${out.givenUp.join(' | ') || 'none'}`;
    runtime = new Runtime({ logger });
    await runtime.start();
    runtime.publish('onramp', {
      id: 'in',
      type: 'kafka',
      config: {
        group_id: unique('restart'),
        topics: [input],
        brokers: [shared.broker],
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

    await eventually(() => out.values.length >= 500, 120_000, 'relaying');
    await kafka!.stop();
    await produce(sent.slice(2000));
    // writes fail: the offramp holds the breaker of the onramp feeding it until the brokers answer
    await eventually(() => said.some((m) => m.includes('/offramp/out/main: the brokers cannot be reached')), 120_000, 'the offramp to notice');
    expect(onramp.breaker.isOpen).to.equal(false);
    expect(onramp.breaker.holders()).to.include('/offramp/out/main');
    await kafka!.start();
    const relayed = () => new Set(out.values).size;
    await whileArriving(relayed, () => relayed() === sent.length, `all ${sent.length} events in ${output}`, { state });
    expect(new Set(out.values)).to.deep.equal(new Set(sent));
    // restored once the brokers answered again
    expect(said.some((m) => m.includes('/offramp/out/main: the brokers answer again'))).to.equal(true);
    await eventually(() => onramp.breaker.isOpen, 120_000, 'the breaker restored');
    const duplicates = out.values.length - sent.length;
    console.log(`      broker restarted: ${sent.length} events, ${duplicates} duplicates, none lost`);
  });
});
