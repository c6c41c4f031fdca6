import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import { UNSETTLED_LIMIT, type KafkaMeta } from '../../../src/connectors/kafka/onramp';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { Peer, brokerOf, consumeFlow, unique, type Flow } from './helpers';

const n = (e: EddyEvent) => (e.data as { n: number }).n;
const meta = (e: EddyEvent) => e.meta.kafka as KafkaMeta;

describe('kafka onramp (against the real broker)', function () {
  this.timeout(60000);
  let broker: string;
  let peer: Peer;
  let flow: Flow | undefined;

  before(async function () {
    broker = brokerOf(await requireService(this, 'kafka'));
    peer = new Peer(broker);
  });
  after(async () => peer?.close());
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  const config = (topic: string, group: string, options: Record<string, string> = {}, extra: Record<string, unknown> = {}) => ({
    group_id: group,
    topics: [topic],
    brokers: [broker],
    rdkafka_options: { 'auto.offset.reset': 'earliest', ...options },
    ...extra,
  });

  it('hands over every message with $kafka (topic, partition, offset, timestamp, key, headers) and its origin URI', async () => {
    const topic = unique('meta');
    await peer.createTopic(topic, 2);
    const before = Date.now();
    await peer.produce(topic, [
      { key: 'k1', value: '{"n":1}', headers: { trace: 'abc' }, partition: 1 },
      { value: '{"n":2}', partition: 0 },
      { key: 'k3', value: '{"n":3}', partition: 1 },
    ]);
    flow = await consumeFlow(config(topic, unique('g')));
    const { events } = flow.recorded;
    await eventually(() => events.length === 3, 30000, 'three events');
    const byN = new Map(events.map((e) => [n(e), e]));
    const one = meta(byN.get(1)!);
    expect(one.topic).to.equal(topic);
    expect(one.partition).to.equal(1);
    expect(one.offset).to.equal(0);
    expect(one.key).to.deep.equal(Buffer.from('k1'));
    expect(one.headers).to.deep.equal({ trace: Buffer.from('abc') });
    expect(one.timestamp).to.be.within(before - 1000, Date.now() + 1000);
    expect(byN.get(1)!.originUri).to.equal(`svc-kafka://${broker}/${topic}/1/0`);
    expect(meta(byN.get(3)!).offset).to.equal(1);
    expect(byN.get(3)!.originUri).to.equal(`svc-kafka://${broker}/${topic}/1/1`);
    // no key, no headers: the optional keys are absent
    const two = meta(byN.get(2)!);
    expect(two).to.not.have.property('key');
    expect(two).to.not.have.property('headers');
    expect(two.partition).to.equal(0);
    // auto commit (the default): not transactional
    expect(events.every((e) => !e.transactional)).to.equal(true);
  });

  it('sends an undecodable message to err and keeps consuming the ones after it', async () => {
    const topic = unique('bad');
    const group = unique('g');
    await peer.createTopic(topic);
    await peer.produce(topic, [{ value: '{"n":1}' }, { value: 'not json' }, { value: '{"n":3}' }]);
    flow = await consumeFlow(config(topic, group, { 'enable.auto.commit': 'false' }));
    const { events, errors } = flow.recorded;
    await eventually(() => events.length === 2 && errors.length === 1, 30000, 'two events and one error');
    expect(events.map(n)).to.deep.equal([1, 3]);
    expect((errors[0].data as { raw: string }).raw).to.equal('not json');
    // the bad message counts as handled: the commit moves past all three
    await eventually(async () => (await peer.committed(group, topic))[0] === 3, 30000, 'offset 3 committed');
  });

  it('with enable.auto.commit false commits only what was acked, and reads a failed event again (retry_failed_events)', async () => {
    const topic = unique('retry');
    const group = unique('g');
    await peer.createTopic(topic);
    await peer.produce(
      topic,
      Array.from({ length: 20 }, (_, i) => ({ value: JSON.stringify({ n: i }) })),
    );
    let refused = 0;
    // the first time n=7 comes, it fails
    flow = await consumeFlow(config(topic, group, { 'enable.auto.commit': 'false' }), (e) => n(e) === 7 && refused++ === 0);
    const { events, failed } = flow.recorded;
    await eventually(() => new Set(events.map(n)).size === 20, 30000, 'all 20 delivered');
    expect(failed.map(n)).to.deep.equal([7]);
    expect(events.every((e) => e.transactional)).to.equal(true);
    // 7 came again after its fail; what was handed over after it may come again too, nothing before it
    expect(events.filter((e) => n(e) === 7)).to.have.length(1);
    expect(events.filter((e) => n(e) < 7).map(n)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
    await eventually(async () => (await peer.committed(group, topic))[0] === 20, 30000, 'offset 20 committed');
  });

  it('with retry_failed_events false gives a failed event up and commits past it', async () => {
    const topic = unique('noretry');
    const group = unique('g');
    await peer.createTopic(topic);
    await peer.produce(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ value: JSON.stringify({ n: i }) })),
    );
    flow = await consumeFlow(config(topic, group, { 'enable.auto.commit': 'false' }, { retry_failed_events: false }), (e) => n(e) === 4);
    const { events, failed } = flow.recorded;
    await eventually(async () => (await peer.committed(group, topic))[0] === 10, 30000, 'offset 10 committed');
    expect(failed.map(n)).to.deep.equal([4]);
    expect(events.map(n)).to.deep.equal([0, 1, 2, 3, 5, 6, 7, 8, 9]);
  });

  it('with auto commit (the default) commits on reception, even for events that fail', async () => {
    const topic = unique('auto');
    const group = unique('g');
    await peer.createTopic(topic);
    await peer.produce(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ value: JSON.stringify({ n: i }) })),
    );
    flow = await consumeFlow(config(topic, group), () => true);
    await eventually(async () => (await peer.committed(group, topic))[0] === 5, 30000, 'offset 5 committed');
    expect(flow.recorded.failed.map(n)).to.deep.equal([0, 1, 2, 3, 4]);
  });

  it(`with enable.auto.commit false hands over at most ${UNSETTLED_LIMIT} messages whose events are neither acked nor failed, and commits none of them`, async () => {
    const topic = unique('window');
    const group = unique('g');
    await peer.createTopic(topic);
    await peer.produce(
      topic,
      Array.from({ length: UNSETTLED_LIMIT + 500 }, (_, i) => ({ value: JSON.stringify({ n: i }) })),
    );
    // a sink that takes every event and never acks it (as a pipeline that drops events would)
    flow = await consumeFlow(config(topic, group, { 'enable.auto.commit': 'false' }), undefined, {}, { autoAck: false });
    const { events } = flow.recorded;
    await eventually(() => events.length === UNSETTLED_LIMIT, 30000, `${UNSETTLED_LIMIT} events`);
    // the window is full: the consumer fetches nothing and its batch waits, so no message more is handed over
    const onramp = flow.runtime.onramp('/onramp/in/main')!.runtime;
    expect(onramp.inputs(), 'reading with the window full').to.deep.equal({ open: 1, reading: 0 });
    expect(events.length).to.equal(UNSETTLED_LIMIT);
    expect((await peer.committed(group, topic))[0]).to.equal(-1);
  });

  it('stops fetching while its circuit breaker is triggered and goes on when it is restored', async () => {
    const topic = unique('pause');
    const group = unique('g');
    await peer.createTopic(topic);
    await peer.produce(topic, [{ value: '{"n":0}' }]);
    flow = await consumeFlow(config(topic, group));
    const { events } = flow.recorded;
    await eventually(async () => events.length === 1 && (await peer.committed(group, topic))[0] === 1, 30000, 'the first event, committed');
    const onramp = flow.runtime.onramp('/onramp/in/main')!.runtime;
    onramp.contraflow({ kind: 'trigger', from: '/offramp/test' });
    await peer.produce(topic, [{ value: '{"n":1}' }, { value: '{"n":2}' }]);
    // paused: the consumer does not fetch them, so nothing is handed over and (auto commit) nothing is committed
    expect(onramp.inputs(), 'reading while triggered').to.deep.equal({ open: 1, reading: 0 });
    expect(events.length).to.equal(1);
    expect((await peer.committed(group, topic))[0]).to.equal(1);
    onramp.contraflow({ kind: 'restore', from: '/offramp/test' });
    await eventually(() => events.length === 3, 30000, 'the two others after the restore');
    expect(events.map(n)).to.deep.equal([0, 1, 2]);
  });

  it('stays in its group while paused longer than the session timeout (the client heartbeats on its own timer)', async function () {
    this.timeout(90000);
    const topic = unique('paused-member');
    const group = unique('g');
    await peer.createTopic(topic);
    await peer.produce(topic, [{ value: '{"n":0}' }]);
    flow = await consumeFlow(config(topic, group, { 'session.timeout.ms': '6000', 'enable.auto.commit': 'false' }));
    const { events } = flow.recorded;
    await eventually(() => events.length === 1, 30000, 'the first event');
    const admin = peer.kafka.admin();
    await admin.connect();
    try {
      const members = async () => (await admin.describeGroups([group])).groups[0].members.map((m) => m.memberId);
      const [member] = await members();
      expect(member, 'eddy is a member of its group').to.be.a('string');
      const onramp = flow.runtime.onramp('/onramp/in/main')!.runtime;
      onramp.contraflow({ kind: 'trigger', from: '/offramp/test' });
      // the precondition, not the proof: time for the broker to expire a member that stopped heartbeating (6 s)
      await new Promise((resolve) => setTimeout(resolve, 9000));
      expect(await members(), 'the same member, still in the group (a kicked one rejoins with a new id)').to.deep.equal([member]);
      onramp.contraflow({ kind: 'restore', from: '/offramp/test' });
      await peer.produce(topic, [{ value: '{"n":1}' }]);
      await eventually(() => events.length === 2, 30000, 'the event produced after the restore');
    } finally {
      await admin.disconnect();
    }
  });
});
