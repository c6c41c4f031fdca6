/** The parts of the kafka connectors that need no broker: the option mapping and the commit bookkeeping. */
import { AuthenticationError, MultipleErrors, NetworkError, ProtocolError } from '@platformatic/kafka';
import { expect } from 'chai';
import { CommitTracker } from '../../../src/connectors/kafka/commits';
import { kafkaOfframp } from '../../../src/connectors/kafka/offramp';
import { kafkaOnramp } from '../../../src/connectors/kafka/onramp';
import { brokerAddress, isTransientError, kafkaSettings, supportedOptions } from '../../../src/connectors/kafka/options';

const ids = (...seqs: number[]) => seqs.map((seq) => ({ uid: 1, seq }));

describe('kafka rdkafka_options', () => {
  it('maps the consumer options users set onto the client', () => {
    const s = kafkaSettings('onramp', {
      'client.id': 'me',
      'group.id': 'other',
      'enable.auto.commit': 'false',
      'auto.offset.reset': 'smallest',
      'session.timeout.ms': 6000,
      'heartbeat.interval.ms': '2000',
      'fetch.wait.max.ms': '50',
      'isolation.level': 'read_uncommitted',
    });
    expect(s.clientId).to.equal('me');
    expect(s.consumer).to.include({
      groupId: 'other',
      autoCommit: false,
      fromBeginning: true,
      sessionTimeout: 6000,
      heartbeatInterval: 2000,
      maxWaitTime: 50,
      readUncommitted: true,
    });
    expect(kafkaSettings('onramp', { 'auto.offset.reset': 'latest' }).consumer.fromBeginning).to.equal(false);
    expect(kafkaSettings('onramp', {}).consumer.autoCommit, 'auto commit is the default').to.equal(true);
  });

  it('maps the producer options users set onto the client', () => {
    const s = kafkaSettings('offramp', {
      acks: '1',
      'compression.codec': 'gzip',
      'linger.ms': '5',
      'batch.num.messages': '500',
      'queue.buffering.max.messages': '4096',
      'message.send.max.retries': '2',
    });
    expect(s.producer).to.include({ acks: 1, compression: 'gzip', lingerMs: 5, batchMessages: 500, queueMessages: 4096 });
    // the producer queue is the offramp's in-flight limit (the breaker triggers when it is full)
    expect(kafkaOfframp.maxInFlight!({ topic: 't', brokers: ['b'], rdkafka_options: { 'queue.buffering.max.messages': '4096' } })).to.equal(4096);
    expect(kafkaOfframp.maxInFlight!({ topic: 't', brokers: ['b'], rdkafka_options: {} })).to.equal(8192);
    expect(s.retry.retries).to.equal(2);
    expect(kafkaSettings('offramp', { 'request.required.acks': 'all' }).producer.acks).to.equal(-1);
  });

  it('maps security.protocol, sasl.* and ssl.* onto TLS and SASL settings', () => {
    const s = kafkaSettings('onramp', {
      'security.protocol': 'SASL_SSL',
      'sasl.mechanisms': 'SCRAM-SHA-512',
      'sasl.username': 'u',
      'sasl.password': 'p',
      'ssl.ca.location': '/etc/ca.pem',
      'ssl.endpoint.identification.algorithm': 'none',
      'enable.ssl.certificate.verification': 'true',
    });
    expect(s.tls).to.equal(true);
    expect(s.useSasl).to.equal(true);
    expect(s.sasl).to.deep.equal({ mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' });
    expect(s.tlsFiles).to.deep.equal({ ca: '/etc/ca.pem' });
    expect(s.tlsInline.rejectUnauthorized).to.equal(true);
    expect(s.tlsInline.checkServerIdentity).to.be.a('function');
  });

  it('refuses other names, the other side’s names and values it cannot use, naming the option', () => {
    const refusals: [Parameters<typeof kafkaSettings>[0], Record<string, string>, RegExp][] = [
      ['onramp', { 'statistics.interval.ms': '1000' }, /^rdkafka_options\.statistics\.interval\.ms: not an option/],
      // a name Object.prototype has is no option either (it was taken for 'a producer option')
      ['onramp', { constructor: 'x' }, /^rdkafka_options\.constructor: not an option/],
      ['onramp', { 'bootstrap.servers': 'x:9092' }, /^rdkafka_options\.bootstrap\.servers: /],
      ['onramp', { 'linger.ms': '5' }, /^rdkafka_options\.linger\.ms: a producer \(offramp\) option/],
      ['offramp', { 'enable.auto.commit': 'false' }, /^rdkafka_options\.enable\.auto\.commit: a consumer \(onramp\) option/],
      ['offramp', { 'compression.type': 'brotli' }, /^rdkafka_options\.compression\.type: expected one of none, gzip, snappy, lz4, zstd/],
      ['onramp', { 'enable.auto.commit': 'maybe' }, /^rdkafka_options\.enable\.auto\.commit: expected true or false/],
      ['onramp', { 'session.timeout.ms': 'soon' }, /^rdkafka_options\.session\.timeout\.ms: expected an integer/],
      ['onramp', { 'security.protocol': 'sasl_ssl', 'sasl.mechanisms': 'GSSAPI' }, /^rdkafka_options\.sasl\.mechanisms: expected one of plain/],
      ['onramp', { 'security.protocol': 'sasl_plaintext', 'sasl.username': 'u' }, /^rdkafka_options\.sasl\.username: .*both/],
      ['onramp', { 'sasl.username': 'u', 'sasl.password': 'p' }, /^rdkafka_options\.sasl\.username: SASL is used only with/],
      ['onramp', { 'ssl.ca.location': '/ca' }, /^rdkafka_options\.ssl\.ca\.location: TLS is used only with/],
      ['onramp', { 'ssl.engine.location': '/x' }, /^rdkafka_options\.ssl\.engine\.location: not available with Node's TLS/],
      ['onramp', { 'session.timeout.ms': '3000', 'heartbeat.interval.ms': '3000' }, /^rdkafka_options\.heartbeat\.interval\.ms: must be below/],
    ];
    for (const [side, options, message] of refusals) expect(() => kafkaSettings(side, options), JSON.stringify(options)).to.throw(message);
  });

  it('refuses at validation a poll interval that would let a paused consumer drop out of its group', () => {
    const config = { group_id: 'g', topics: ['t'], brokers: ['b'], retry_failed_events: true };
    expect(() => kafkaOnramp.validate!({ ...config, poll_interval: 100, rdkafka_options: {} })).to.not.throw();
    expect(() => kafkaOnramp.validate!({ ...config, poll_interval: 10000, rdkafka_options: {} })).to.throw(
      /^poll_interval: 10000 ms must be below session\.timeout\.ms/,
    );
    expect(() => kafkaOnramp.validate!({ ...config, poll_interval: 100, rdkafka_options: { 'fetch.wait.max.ms': '20000' } })).to.throw(
      /^rdkafka_options\.fetch\.wait\.max\.ms/,
    );
  });

  it('lists the names each side takes', () => {
    expect(supportedOptions('onramp')).to.include.members(['group.id', 'enable.auto.commit', 'auto.offset.reset', 'client.id', 'sasl.username']);
    expect(supportedOptions('onramp')).to.not.include('acks');
    expect(supportedOptions('offramp')).to.include.members(['acks', 'compression.codec', 'linger.ms', 'client.id']);
    expect(supportedOptions('offramp')).to.not.include('group.id');
  });

  it('gives broker addresses the default port 9092 when they have none', () => {
    expect(['kafka', 'kafka:19092', '10.0.0.1', '::1', '[::1]', '[::1]:9093'].map(brokerAddress)).to.deep.equal([
      'kafka:9092',
      'kafka:19092',
      '10.0.0.1:9092',
      '[::1]:9092',
      '[::1]:9092',
      '[::1]:9093',
    ]);
  });
});

describe('kafka commit on ack (CommitTracker)', () => {
  it('commits only the prefix of a partition whose events are all acked', () => {
    const t = new CommitTracker(true);
    const [a, b, c] = [0, 1, 2].map((o) => t.received('t', 0, o)!);
    t.decoded(a, ids(1));
    t.decoded(b, ids(2, 3)); // a message that made two events
    t.decoded(c, ids(4));
    t.ack(4);
    t.ack(2);
    expect(t.takeCommits(), 'nothing before offset 0 is settled').to.deep.equal([]);
    t.ack(1);
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 1n, leaderEpoch: -1 }]);
    t.ack(3);
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 3n, leaderEpoch: -1 }]);
    expect(t.takeCommits(), 'only what moved').to.deep.equal([]);
    expect(t.unsettled).to.equal(0);
  });

  it('keeps partitions apart, and settles at once a message that made no event (it went to err)', () => {
    const t = new CommitTracker(true);
    const p0 = t.received('t', 0, 10)!;
    const p1 = t.received('t', 1, 5)!;
    t.decoded(p0, ids());
    t.decoded(p1, ids(1));
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 11n, leaderEpoch: -1 }]);
    expect(t.unsettled).to.equal(1);
  });

  it('does not commit past a message that is not decoded yet (held while paused)', () => {
    const t = new CommitTracker(true);
    const a = t.received('t', 0, 0)!;
    const b = t.received('t', 0, 1)!;
    t.decoded(b, ids(1));
    t.ack(1);
    expect(t.takeCommits()).to.deep.equal([]);
    t.decoded(a, ids(2));
    t.ack(2);
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 2n, leaderEpoch: -1 }]);
  });

  it('on a fail with retry, says where to seek and forgets that message and those after it', () => {
    const t = new CommitTracker(true);
    const entries = [0, 1, 2, 3].map((o) => t.received('t', 0, o)!);
    entries.forEach((e, i) => t.decoded(e, ids(i + 1)));
    t.ack(1);
    expect(t.fail(2)).to.deep.equal({ topic: 't', partition: 0, offset: 1 });
    // acks of what came after the failed one no longer count: they are read again
    t.ack(3);
    t.ack(4);
    expect(t.fail(2), 'a second insight for the same event').to.equal(undefined);
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 1n, leaderEpoch: -1 }]);
    // read again from offset 1
    const again = [1, 2, 3].map((o) => t.received('t', 0, o)!);
    again.forEach((e, i) => t.decoded(e, ids(10 + i)));
    [10, 11, 12].forEach((seq) => t.ack(seq));
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 4n, leaderEpoch: -1 }]);
    expect(t.unsettled).to.equal(0);
  });

  it('on a fail without retry, gives the event up and commits past it', () => {
    const t = new CommitTracker(false);
    const [a, b] = [0, 1].map((o) => t.received('t', 0, o)!);
    t.decoded(a, ids(1));
    t.decoded(b, ids(2));
    expect(t.fail(1)).to.equal(undefined);
    t.ack(2);
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 2n, leaderEpoch: -1 }]);
  });

  it('on a rejoin, forgets the partitions assigned elsewhere: their late acks do not commit, a stale batch of them is not handed over', () => {
    const t = new CommitTracker(true);
    t.rejoined({ t: [0, 1] });
    const a = t.received('t', 0, 0)!;
    t.decoded(a, ids(1));
    const b = t.received('t', 1, 0)!;
    t.rejoined({ t: [1] });
    t.ack(1);
    // an entry decoded after the rejoin (it was held) does not count either
    t.decoded(b, ids(2));
    t.ack(2);
    expect(t.takeCommits(), 'only the kept partition commits').to.deep.equal([{ topic: 't', partition: 1, offset: 1n, leaderEpoch: -1 }]);
    expect(t.received('t', 0, 1), 'a message of a partition now another member’s').to.equal(undefined);
    expect(t.unsettled).to.equal(0);
    // assigned again later: read from the committed offset, a new start
    t.rejoined({ t: [0, 1] });
    const again = t.received('t', 0, 0)!;
    t.decoded(again, ids(3));
    t.ack(3);
    expect(t.takeCommits()).to.deep.equal([
      { topic: 't', partition: 1, offset: 1n, leaderEpoch: -1 },
      { topic: 't', partition: 0, offset: 1n, leaderEpoch: -1 },
    ]);
  });

  it('on a rejoin that keeps a partition, skips what was handed over when it is read again, and commits its acks', () => {
    const t = new CommitTracker(true);
    t.rejoined({ t: [0] });
    const first = [0, 1, 2, 3].map((o) => t.received('t', 0, o)!);
    first.forEach((e, i) => t.decoded(e, ids(i + 1)));
    t.ack(1);
    t.ack(2);
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 2n, leaderEpoch: -1 }]);
    // the commit of 2 was refused in the rebalance: the re-read starts at 0
    t.rejoined({ t: [0] });
    expect(
      [0, 1, 2, 3].map((o) => t.received('t', 0, o)),
      'acked, or in flight: not handed over again',
    ).to.deep.equal([undefined, undefined, undefined, undefined]);
    expect(t.takeCommits(), 'the committable offset is committed again after the rejoin').to.deep.equal([
      { topic: 't', partition: 0, offset: 2n, leaderEpoch: -1 },
    ]);
    // normal delivery after the highest offset handed over; the kept in-flight ones commit when acked
    const next = t.received('t', 0, 4)!;
    t.decoded(next, ids(5));
    [3, 4, 5].forEach((seq) => t.ack(seq));
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 5n, leaderEpoch: -1 }]);
    expect(t.unsettled).to.equal(0);
  });

  it('a fail after a rejoin seeks back, and what the seek reads again is handed over (the skip stops below it)', () => {
    const t = new CommitTracker(true);
    t.rejoined({ t: [0] });
    const first = [0, 1, 2, 3].map((o) => t.received('t', 0, o)!);
    first.forEach((e, i) => t.decoded(e, ids(i + 1)));
    t.ack(1);
    t.rejoined({ t: [0] });
    // the re-read from the committed offset (none: 0) has reached offset 1 when the event of offset 2 fails
    expect(t.received('t', 0, 0)).to.equal(undefined);
    expect(t.received('t', 0, 1)).to.equal(undefined);
    expect(t.fail(3)).to.deep.equal({ topic: 't', partition: 0, offset: 2 });
    // read from 2 again: 2 and 3 are handed over, once
    const again = [2, 3].map((o) => t.received('t', 0, o));
    expect(again.every((e) => e !== undefined)).to.equal(true);
    again.forEach((e, i) => t.decoded(e!, ids(10 + i)));
    [2, 10, 11].forEach((seq) => t.ack(seq));
    t.ack(4); // the late ack of the dropped delivery of 3: no longer counts, and does no harm
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 4n, leaderEpoch: -1 }]);
    expect(t.unsettled).to.equal(0);
  });

  it('a message of several events: a second ack of one event does not count for another; a fail or a rejoin leaves none of its events tracked', () => {
    const tracked = (t: CommitTracker) => (t as unknown as { bySeq: Map<number, unknown> }).bySeq.size;
    const t = new CommitTracker(true);
    t.rejoined({ t: [0, 1] });
    const [a, b] = [0, 1].map((o) => t.received('t', 0, o)!);
    t.decoded(a, ids(1, 2, 3));
    t.decoded(b, ids(4, 5));
    t.ack(1);
    t.ack(1);
    t.ack(2);
    expect(t.takeCommits(), 'event 3 is not acked yet').to.deep.equal([]);
    t.ack(3);
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 1n, leaderEpoch: -1 }]);
    expect(t.fail(5)).to.deep.equal({ topic: 't', partition: 0, offset: 1 });
    expect(tracked(t), 'the failed message’s other event').to.equal(0);
    t.ack(4); // late: no longer counts
    const c = t.received('t', 1, 0)!;
    t.decoded(c, ids(6, 7));
    t.rejoined({ t: [0] });
    expect(tracked(t), 'the events of a partition assigned elsewhere').to.equal(0);
    expect(t.takeCommits(), 'the kept partition’s offset, committed again').to.deep.equal([{ topic: 't', partition: 0, offset: 1n, leaderEpoch: -1 }]);
    expect(t.unsettled).to.equal(0);
  });

  it('keeps memory bounded: a long settled run leaves nothing behind', () => {
    const t = new CommitTracker(true);
    for (let o = 0; o < 50_000; o++) {
      const e = t.received('t', 0, o)!;
      t.decoded(e, ids(o + 1));
      t.ack(o + 1);
    }
    expect(t.takeCommits()).to.deep.equal([{ topic: 't', partition: 0, offset: 50000n, leaderEpoch: -1 }]);
    expect(t.unsettled).to.equal(0);
    const track = (t as unknown as { tracks: Map<string, { entries: unknown[] }> }).tracks.values().next().value!;
    expect(track.entries.length).to.be.below(2100);
  });
});

describe("kafka errors: which failures waiting may cure (the client's own error classes)", () => {
  it("takes unreachable brokers and retriable broker answers, after the client's retries, as transient", () => {
    expect(isTransientError(new NetworkError('connect ECONNREFUSED 127.0.0.1:9092'))).to.equal(true);
    const loading = new ProtocolError('COORDINATOR_LOAD_IN_PROGRESS');
    expect(isTransientError(new MultipleErrors('joinGroup failed 6 times.', [loading, new ProtocolError('NOT_COORDINATOR')]))).to.equal(true);
    expect(isTransientError(new MultipleErrors('consume failed', [new MultipleErrors('joinGroup failed 6 times.', [loading])]))).to.equal(true);
  });

  it('takes a refusal for good as final, also beside retriable answers', () => {
    expect(isTransientError(new ProtocolError('INCONSISTENT_GROUP_PROTOCOL'))).to.equal(false);
    expect(isTransientError(new ProtocolError('GROUP_AUTHORIZATION_FAILED'))).to.equal(false);
    expect(
      isTransientError(
        new MultipleErrors('joinGroup failed 2 times.', [new ProtocolError('REBALANCE_IN_PROGRESS'), new ProtocolError('INCONSISTENT_GROUP_PROTOCOL')]),
      ),
    ).to.equal(false);
    expect(isTransientError(new AuthenticationError('SASL authentication failed'))).to.equal(false);
    expect(isTransientError(new Error('something else'))).to.equal(false);
  });
});
