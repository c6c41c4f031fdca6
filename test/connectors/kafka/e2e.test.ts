import { expect } from 'chai';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { freePort } from '../net-helpers';
import { Peer, brokerOf, unique } from './helpers';

describe('kafka end to end, published over the REST API', function () {
  this.timeout(60000);
  let broker: string;
  let peer: Peer;
  let rt: Started | undefined;

  before(async function () {
    broker = brokerOf(await requireService(this, 'kafka'));
    peer = new Peer(broker);
  });
  after(async () => peer?.close());
  afterEach(async () => {
    await rt?.stop();
    rt = undefined;
  });

  const publish = async (kind: string, body: unknown) => call(rt!.base, 'POST', `/${kind}`, { body });

  it('relays a topic through a pipeline into another topic: kafka onramp (commit on ack) -> passthrough -> kafka offramp', async () => {
    const input = unique('e2e-in');
    const output = unique('e2e-out');
    const group = unique('e2e');
    await peer.createTopic(input, 2);
    await peer.createTopic(output);
    const sent = Array.from({ length: 200 }, (_, i) => JSON.stringify({ n: i, text: `event ${i}` }));
    await peer.produce(
      input,
      sent.map((value, i) => ({ value, key: `k${i % 7}` })),
    );
    rt = await startRuntime();
    const onramp = {
      id: 'orders',
      type: 'kafka',
      config: { group_id: group, topics: [input], brokers: [broker], rdkafka_options: { 'enable.auto.commit': 'false', 'auto.offset.reset': 'earliest' } },
    };
    const offramp = { id: 'relay', type: 'kafka', config: { topic: output, brokers: [broker], key: 'relayed' } };
    const binding = {
      id: 'copy',
      links: {
        '/onramp/orders/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'],
        '/pipeline/system::passthrough/{instance}/out': ['/offramp/relay/{instance}/in'],
      },
    };
    expect((await publish('onramp', onramp)).status).to.equal(201);
    expect((await publish('offramp', offramp)).status).to.equal(201);
    expect((await publish('binding', binding)).status).to.equal(201);
    expect((await call(rt.base, 'POST', '/binding/copy/one')).status).to.equal(201);

    const got = await peer.readTopic(output, sent.length);
    expect(got.map((m) => m.value!.toString()).sort()).to.deep.equal([...sent].sort());
    expect(new Set(got.map((m) => m.key!.toString()))).to.deep.equal(new Set(['relayed']));
    // every message was acked by the offramp's broker write, so both partitions are committed to their end
    const committedTotal = async () => Object.values(await peer.committed(group, input)).reduce((a, b) => a + b, 0);
    await eventually(async () => (await committedTotal()) === sent.length, 30000, `${sent.length} offsets committed`);
    expect((await call(rt.base, 'DELETE', '/binding/copy/one')).status).to.equal(200);
  });

  it('answers an activation whose brokers do not answer with a 400 naming the onramp or offramp and the cause', async () => {
    rt = await startRuntime();
    const port = await freePort();
    const nowhere = [`127.0.0.1:${port}`];
    await publish('onramp', { id: 'lost', type: 'kafka', config: { group_id: 'g', topics: ['t'], brokers: nowhere } });
    await publish('offramp', { id: 'gone', type: 'kafka', config: { topic: 't', brokers: nowhere } });
    await publish('binding', { id: 'in', links: { '/onramp/lost/{instance}/out': ['/pipeline/system::passthrough/{instance}/in'] } });
    await publish('binding', { id: 'out', links: { '/pipeline/system::passthrough/{instance}/out': ['/offramp/gone/{instance}/in'] } });
    const onramp = await call(rt.base, 'POST', '/binding/in/one');
    expect(onramp.status).to.equal(400);
    expect(onramp.text).to.match(new RegExp(`onramp 'lost' \\(kafka\\) cannot start: cannot reach the kafka brokers 127.0.0.1:${port}: .*ECONNREFUSED`));
    const offramp = await call(rt.base, 'POST', '/binding/out/one');
    expect(offramp.status).to.equal(400);
    expect(offramp.text).to.match(new RegExp(`offramp 'gone' \\(kafka\\) cannot start: cannot reach the kafka brokers 127.0.0.1:${port}: .*ECONNREFUSED`));
  });

  it('refuses at publish an rdkafka option it does not map, or a value it cannot use, with a 400 naming the option', async () => {
    rt = await startRuntime();
    const onramp = (rdkafka_options: Record<string, string>) => ({
      id: 'in',
      type: 'kafka',
      config: { group_id: 'g', topics: ['t'], brokers: [broker], rdkafka_options },
    });
    const offramp = (rdkafka_options: Record<string, string>) => ({ id: 'out', type: 'kafka', config: { topic: 't', brokers: [broker], rdkafka_options } });
    const cases: [string, unknown, RegExp][] = [
      ['onramp', onramp({ 'statistics.interval.ms': '1000' }), /config\.rdkafka_options\.statistics\.interval\.ms: not an option eddy maps/],
      ['onramp', onramp({ 'auto.offset.reset': 'sometimes' }), /config\.rdkafka_options\.auto\.offset\.reset: expected one of/],
      ['onramp', onramp({ acks: 'all' }), /config\.rdkafka_options\.acks: a producer \(offramp\) option/],
      ['offramp', offramp({ 'group.id': 'g' }), /config\.rdkafka_options\.group\.id: a consumer \(onramp\) option/],
      ['offramp', offramp({ 'compression.codec': 'brotli' }), /config\.rdkafka_options\.compression\.codec: expected one of none, gzip, snappy, lz4, zstd/],
      ['offramp', offramp({ 'sasl.kerberos.service.name': 'kafka' }), /config\.rdkafka_options\.sasl\.kerberos\.service\.name: not available/],
    ];
    for (const [kind, body, message] of cases) {
      const answer = await publish(kind, body);
      expect(answer.status, JSON.stringify(body)).to.equal(400);
      expect(answer.text).to.match(message);
    }
    // the options it maps are taken
    const ok = await publish('onramp', onramp({ 'enable.auto.commit': 'false', 'session.timeout.ms': '6000', 'client.id': 'me', 'compression.codec': 'gzip' }));
    expect(ok.status, ok.text).to.equal(201);
  });
});
