import { expect } from 'chai';
import type { EddyEvent, Meta } from '../../../src/core/event';
import type { Sink } from '../../../src/connectors/connector';
import { kafkaOfframp, type KafkaOfframpConfig } from '../../../src/connectors/kafka/offramp';
import { requireService } from '../../helpers/services';
import { fakeOfframpContext, freePort } from '../net-helpers';
import { Peer, brokerOf, unique } from './helpers';

let seq = 0;
function event(data: unknown, meta: Record<string, unknown> = {}, transactional = true): EddyEvent {
  return { id: { uid: 7, seq: ++seq }, data, meta, ingestNs: 0n, originUri: 'svc-test://here', isBatch: false, transactional };
}

const config = (c: Partial<KafkaOfframpConfig> & { topic: string; brokers: string[] }): KafkaOfframpConfig => ({ rdkafka_options: {}, ...c });

describe('kafka offramp (against the real broker)', function () {
  this.timeout(30000);
  let broker: string;
  let peer: Peer;
  let sink: Sink | undefined;

  before(async function () {
    broker = brokerOf(await requireService(this, 'kafka'));
    peer = new Peer(broker);
  });
  after(async () => peer?.close());
  afterEach(async () => {
    await sink?.close?.();
    sink = undefined;
  });

  it('writes each payload as one message keyed by config key, or by $kafka_key when an event has one, and acks once the broker has it', async () => {
    const topic = unique('out');
    await peer.createTopic(topic);
    const { ctx, log } = fakeOfframpContext();
    sink = await kafkaOfframp.create(config({ topic, brokers: [broker], key: 'fixed' }), ctx);
    const a = event({ n: 1 });
    const b = event({ n: 2 }, { kafka_key: 'from-meta' });
    const c = event([{ n: 3 }, { n: 4 }], { kafka_key: Buffer.from([1, 2, 3]) });
    // sent within one turn of the event loop: one produce request, each send settling when the broker acknowledged it
    const sends = [
      sink.send([Buffer.from('{"n":1}')], a),
      sink.send([Buffer.from('{"n":2}')], b),
      sink.send([Buffer.from('{"n":3}'), Buffer.from('{"n":4}')], c),
    ] as Promise<Meta>[];
    // the machinery acks them (autoAck) with the meta they resolve with: the request's time
    expect(kafkaOfframp.autoAck).to.equal(true);
    expect(sends[0]).to.equal(sends[2], 'one promise for the request');
    const metas = await Promise.all(sends);
    expect(metas.every((m) => typeof m.time === 'number')).to.equal(true);
    expect(log.acks, 'the sink does not ack by itself').to.deep.equal([]);
    const messages = await peer.readTopic(topic, 4);
    const byValue = new Map(messages.map((m) => [m.value!.toString(), m.key]));
    expect(byValue.get('{"n":1}')).to.deep.equal(Buffer.from('fixed'));
    expect(byValue.get('{"n":2}')).to.deep.equal(Buffer.from('from-meta'));
    expect(byValue.get('{"n":3}')).to.deep.equal(Buffer.from([1, 2, 3]));
    expect(byValue.get('{"n":4}')).to.deep.equal(Buffer.from([1, 2, 3]));
    expect(log.triggers).to.equal(0);
  });

  it('writes messages without a key when neither config nor meta names one, and does not ack events that are not transactional', async () => {
    const topic = unique('nokey');
    await peer.createTopic(topic);
    const { ctx, log } = fakeOfframpContext();
    sink = await kafkaOfframp.create(config({ topic, brokers: [broker] }), ctx);
    await sink.send([Buffer.from('"plain"')], event('plain', {}, false));
    const [message] = await peer.readTopic(topic, 1);
    expect(message.key).to.equal(null);
    expect(message.value!.toString()).to.equal('"plain"');
    expect(log.acks).to.deep.equal([]);
  });

  it('puts a keyed message where the Java client does (murmur2 & 0x7fffffff), and spreads messages without a key', async () => {
    // Kafka's own murmur2 test vectors (UtilsTest.testMurmur2): the Java client's partition is toPositive(hash) % count.
    // With 3 partitions the client's default (hash >>> 0) puts every negative one elsewhere; 4 would hide that (2^31 % 4 = 0)
    const javaHashes: Record<string, number> = {
      '21': -973932308,
      foobar: -790332482,
      'a-little-bit-long-string': -985981536,
      'a-little-bit-longer-string': -1486304829,
      lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8: -58897971,
      abc: 479470107,
    };
    const topic = unique('murmur');
    await peer.createTopic(topic, 3);
    const { ctx } = fakeOfframpContext();
    sink = await kafkaOfframp.create(config({ topic, brokers: [broker] }), ctx);
    const keys = Object.keys(javaHashes);
    await Promise.all(keys.map(async (key) => sink!.send([Buffer.from(JSON.stringify(key))], event(key, { kafka_key: key }))));
    await Promise.all([0, 1, 2, 3, 4, 5].map(async (i) => sink!.send([Buffer.from(`{"free":${i}}`)], event({ free: i }))));
    const messages = await peer.readTopic(topic, keys.length + 6);
    const partitionOf = new Map(messages.filter((m) => m.key).map((m) => [m.key!.toString(), m.partition]));
    for (const key of keys) expect(partitionOf.get(key), key).to.equal((javaHashes[key] & 0x7fffffff) % 3);
    const free = new Set(messages.filter((m) => !m.key).map((m) => m.partition));
    expect([...free].sort(), 'six messages without a key go round robin').to.deep.equal([0, 1, 2]);
  });

  it('splits what one turn gathers into produce requests the broker takes (a partition batch stays below its 1 MB)', async () => {
    const topic = unique('big');
    await peer.createTopic(topic);
    const { ctx } = fakeOfframpContext();
    sink = await kafkaOfframp.create(config({ topic, brokers: [broker] }), ctx);
    // 1.5 MB within one turn, all for the one partition: as one record batch the broker would refuse it (message.max.bytes)
    const events = [0, 1, 2, 3, 4].map((i) => event({ i }));
    const metas = await Promise.all(events.map(async (e, i) => sink!.send([Buffer.alloc(300 * 1024, 48 + i)], e)));
    expect(metas.every((m) => typeof (m as Meta).time === 'number')).to.equal(true);
    expect((await peer.readTopic(topic, 5)).map((m) => m.value!.length)).to.deep.equal(Array(5).fill(300 * 1024));
  });

  it('fails a send the broker refuses (a message over the topic limit), without triggering the breaker', async () => {
    const topic = unique('small');
    await peer.createTopic(topic, 1, { 'max.message.bytes': '1024' });
    const { ctx, log } = fakeOfframpContext();
    sink = await kafkaOfframp.create(config({ topic, brokers: [broker], rdkafka_options: { 'message.send.max.retries': '0' } }), ctx);
    const big = event({ big: true });
    let error: Error | undefined;
    await Promise.resolve(sink.send([Buffer.alloc(4096, 'x')], big)).catch((err: unknown) => (error = err as Error));
    expect(error?.message).to.match(/too large|MESSAGE_TOO_LARGE|larger/i);
    expect(log.acks).to.deep.equal([]);
    expect(log.triggers).to.equal(0);
    // the next one passes
    await sink.send([Buffer.from('"small"')], event('small'));
  });

  it('cannot be created when no broker answers: a clear error naming the brokers, within a bounded time', async () => {
    const port = await freePort();
    const { ctx } = fakeOfframpContext();
    let error: Error | undefined;
    await Promise.resolve(kafkaOfframp.create(config({ topic: 't', brokers: [`127.0.0.1:${port}`] }), ctx)).catch((err: unknown) => (error = err as Error));
    expect(error?.message).to.contain(`cannot reach the kafka brokers 127.0.0.1:${port}`);
    expect(error?.message).to.contain('ECONNREFUSED');
  });
});
