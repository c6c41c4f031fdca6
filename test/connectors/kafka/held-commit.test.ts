import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import { createLogger } from '../../../src/core/logger';
import type { OfframpType, OnrampSource, OnrampType } from '../../../src/connectors/connector';
import { kafkaOnramp, type KafkaOnrampConfig } from '../../../src/connectors/kafka/onramp';
import { Runtime } from '../../../src/runtime/runtime';
import { eventually } from '../../helpers/runtime';
import { passthrough } from '../net-helpers';
import { consumeFlow, unique, useSharedKafka, type Flow } from './helpers';

const n = (e: EddyEvent) => (e.data as { n: number }).n;

/**
 * The real kafka onramp without its pause and resume: the machinery then
 * treats it as a source that cannot pause and holds, undecoded, the messages
 * it hands over while the breaker is triggered. (The kafka source itself
 * stops handing over the moment it is paused, so this is how a test reaches
 * the state its commit bookkeeping must survive: messages received but not
 * decoded yet.)
 */
const unpausedKafka: OnrampType<KafkaOnrampConfig> = {
  name: 'kafka-unpaused',
  defaultCodec: 'json',
  configSchema: kafkaOnramp.configSchema,
  async create(config, ctx) {
    const kafka = await kafkaOnramp.create(config, ctx);
    const source: OnrampSource = {
      frames: kafka.frames,
      transactional: kafka.transactional,
      onAck: (id, insight) => kafka.onAck?.(id, insight),
      onFail: (id, insight) => kafka.onFail?.(id, insight),
      close: () => kafka.close?.(),
    };
    return source;
  },
};

describe('kafka onramp (against the real broker): messages received but not decoded yet', function () {
  this.timeout(60000);
  const kafka = useSharedKafka();
  let runtime: Runtime | undefined;
  let flow: Flow | undefined;

  afterEach(async () => {
    await runtime?.shutdown();
    await flow?.stop();
    runtime = flow = undefined;
  });

  it('commits no further than the last acked message before them, so a crash reads them again', async () => {
    const topic = unique('held');
    const group = unique('g');
    const config = {
      group_id: group,
      topics: [topic],
      brokers: [kafka.broker],
      rdkafka_options: { 'enable.auto.commit': 'false', 'auto.offset.reset': 'earliest' },
    };
    await kafka.peer.createTopic(topic);
    await kafka.peer.produce(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ value: JSON.stringify({ n: i + 1 }) })),
    );

    // a sink that triggers the breaker when it gets n=3, and acks 1..3 only when the test says so
    const received: number[] = [];
    const pending: (() => void)[] = [];
    const sink: OfframpType<Record<string, never>> = {
      name: 'gatekeeper',
      defaultCodec: 'json',
      autoAck: true,
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: (_config, ctx) => ({
        send(_payloads, event) {
          received.push(n(event));
          if (n(event) > 3) return undefined;
          if (n(event) === 3) ctx.trigger();
          return new Promise<void>((resolve) => pending.push(resolve));
        },
      }),
    };
    runtime = new Runtime({ logger: createLogger('silent') }).registerOnramp(unpausedKafka).registerOfframp(sink);
    await runtime.start();
    runtime.publish('onramp', { id: 'in', type: 'kafka-unpaused', config });
    runtime.publish('pipeline', passthrough('p'));
    runtime.publish('offramp', { id: 'keep', type: 'gatekeeper' });
    runtime.publish('binding', {
      id: 'flow',
      links: { '/onramp/in/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/keep/{instance}/in'] },
    });
    await runtime.activate('binding', 'flow', 'main');
    const onramp = runtime.onramp('/onramp/in/main')!.runtime;

    // 4..10 were received from the broker while the breaker was triggered: held, not decoded
    await eventually(() => onramp.held === 7, 30000, 'seven messages held');
    expect(received).to.deep.equal([1, 2, 3]);
    expect(await kafka.peer.committed(group, topic)).to.deep.equal({ 0: -1 });

    // 1..3 are acked now, after 4..10 were received: the commit may cover them, and nothing after them
    pending.splice(0).forEach((resolve) => resolve());
    await eventually(async () => (await kafka.peer.committed(group, topic))[0] >= 3, 30000, 'offset 3 committed');
    expect(await kafka.peer.committed(group, topic)).to.deep.equal({ 0: 3 });

    // the process goes away with 4..10 still held (shutdown without a restore drops them, as a crash would)
    await runtime.shutdown();
    runtime = undefined;
    expect(await kafka.peer.committed(group, topic)).to.deep.equal({ 0: 3 });

    // the next consumer of the group reads them again; 11 is a sentinel that marks the end
    await kafka.peer.produce(topic, [{ value: JSON.stringify({ n: 11 }) }]);
    flow = await consumeFlow(config);
    await eventually(() => flow!.recorded.events.some((e) => n(e) === 11), 30000, 'the sentinel');
    expect(flow.recorded.events.map(n)).to.deep.equal([4, 5, 6, 7, 8, 9, 10, 11]);
  });
});
