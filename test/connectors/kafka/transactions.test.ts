/**
 * What exactly-once (the next step) will use, against the real broker: a
 * producer built by the offramp's `producerOptions` with a `transactionalId`
 * writes output and commits a consumer's offsets in one transaction
 * (docs/connectors/kafka.md, "Transactions: what the next step uses"). A
 * committed transaction's output and offsets are seen; an aborted one's
 * output is not, by a read_committed consumer.
 */
import { expect } from 'chai';
import { Consumer, Producer, type Message } from '@platformatic/kafka';
import { kafkaSettings, producerOptions } from '../../../src/connectors/kafka/options';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { Peer, brokerOf, unique } from './helpers';

type Msg = Message;

describe('kafka transactions through @platformatic/kafka (against the real broker)', function () {
  this.timeout(60000);
  let broker: string;
  let peer: Peer;
  const clients: { close(force?: boolean): Promise<void> }[] = [];

  before(async function () {
    broker = brokerOf(await requireService(this, 'kafka'));
    peer = new Peer(broker);
  });
  after(async () => peer?.close());
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close(true).catch(() => undefined);
  });

  /** Every value on `topic` from the start, read at `isolationLevel` (0 uncommitted, 1 committed), until `last` arrived. */
  async function readUntil(topic: string, isolationLevel: 0 | 1, last: string): Promise<string[]> {
    const reader = new Consumer({ clientId: 'eddy-test-reader', bootstrapBrokers: [broker], groupId: unique('reader') });
    clients.push(reader);
    const values: string[] = [];
    const stream = await reader.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 100, isolationLevel });
    stream.on('data', (m: Msg) => values.push(m.value.toString()));
    await eventually(() => values.includes(last), 30000, `${last} on ${topic} (have ${JSON.stringify(values)})`);
    return values;
  }

  it('writes output and commits the input offsets in one transaction; an aborted transaction is not seen read_committed', async () => {
    const input = unique('tx-in');
    const output = unique('tx-out');
    const group = unique('tx-g');
    await peer.createTopic(input);
    await peer.createTopic(output);
    await peer.produce(input, [{ value: 'a' }, { value: 'b' }, { value: 'c' }]);

    const consumer = new Consumer({ clientId: 'eddy-test-tx', bootstrapBrokers: [broker], groupId: group });
    clients.push(consumer);
    const read: Msg[] = [];
    const stream = await consumer.consume({ topics: [input], mode: 'committed', fallbackMode: 'earliest', autocommit: false, maxWaitTime: 100 });
    stream.on('data', (m: Msg) => read.push(m));
    await eventually(() => read.length === 3, 30000, 'the three input messages');

    // a stable transactional id is what fences a zombie producer: the options must carry it to the client
    const transactionalId = unique('tx-id');
    const producer = new Producer(producerOptions(kafkaSettings('offramp', {}), [broker], 'eddy-test-tx', { transactionalId }));
    clients.push(producer);

    // committed: the output and the consumer's position move together
    const tx = await producer.beginTransaction();
    expect(tx.id, 'the transaction runs under the id the options gave').to.equal(transactionalId);
    await tx.send({ messages: read.map((m) => ({ topic: output, value: Buffer.from(`out-${m.value.toString()}`) })) });
    await tx.addConsumer(consumer);
    // the offset after the last message read: what the group resumes from
    await tx.addOffset(read[2]);
    await tx.commit();
    // the group coordinator applies the transaction's offsets when it writes the commit marker, a moment after commit() answered
    await eventually(async () => (await peer.committed(group, input))[0] === 3, 30000, 'the input offset 3, committed by the transaction');

    // aborted: written to the log, but a read_committed consumer skips it
    const aborted = await producer.beginTransaction();
    await aborted.send({ messages: [{ topic: output, value: Buffer.from('aborted') }] });
    await aborted.abort();
    const after = await producer.beginTransaction();
    await after.send({ messages: [{ topic: output, value: Buffer.from('after') }] });
    await after.commit();

    expect(await readUntil(output, 1, 'after'), 'read_committed').to.deep.equal(['out-a', 'out-b', 'out-c', 'after']);
    // the aborted message is in the log: only the isolation level keeps it out
    expect(await readUntil(output, 0, 'after'), 'read_uncommitted').to.deep.equal(['out-a', 'out-b', 'out-c', 'aborted', 'after']);
  });
});
