/**
 * A rebalance against the real broker, with events in flight: an eddy kafka
 * onramp (commit on ack) holds every event of a 2-partition topic unacked
 * when a plain @platformatic/kafka consumer joins its group (a kafkajs one
 * cannot: its assignor is named RoundRobinAssigner, the client's
 * roundrobin, and a group takes only members with a protocol in common).
 * The group is rebalanced; eddy keeps one partition and gives the other up.
 * eddy reads the kept partition again from its committed offset (nothing
 * committed yet): the
 * events eddy handed over already must not be handed over again, and the
 * late acks of the partition given up must not commit. When the other
 * consumer leaves, eddy takes that partition back and reads it from its
 * committed offset (again: a new generation). Each step waits for a positive
 * signal: eddy's join log line, a marker message produced after the join.
 *
 * A client restart is a rejoin too: a private broker is stopped while events
 * are held, they are acked while it is down (the commit cannot go out), and
 * after the restart the kept partitions skip what was handed over and commit
 * what was acked.
 */
import { expect } from 'chai';
import type { EddyEvent } from '../../../src/core/event';
import type { Logger } from '../../../src/core/logger';
import type { OfframpType } from '../../../src/connectors/connector';
import type { KafkaMeta } from '../../../src/connectors/kafka/onramp';
import { Runtime } from '../../../src/runtime/runtime';
import { PrivateService } from '../../helpers/private-service';
import { eventually } from '../../helpers/runtime';
import { requireService } from '../../helpers/services';
import { passthrough } from '../net-helpers';
import { Peer, brokerOf, relayConfig, spawnEddy, unique, useSharedKafka, type EddyChild } from './helpers';
import type { Consumer as KafkajsConsumer } from 'kafkajs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Consumer } from '@platformatic/kafka';

const n = (e: EddyEvent) => (e.data as { n: number }).n;
const partitionOf = (e: EddyEvent) => (e.meta.kafka as KafkaMeta).partition;

/** The partitions of each `joined the group` line, in order. */
function joins(lines: string[]): number[][] {
  return lines
    .filter((l) => l.includes('joined the group; assigned'))
    .map((l) => [...(/\[([\d, ]*)\]/.exec(l)?.[1] ?? '').matchAll(/\d+/g)].map((m) => Number(m[0])).sort());
}

/** The partitions of the last join. */
const lastJoin = (lines: string[]): number[] => joins(lines).at(-1) ?? [];

interface HoldingFlow {
  runtime: Runtime;
  /** every event the sink got, in order */
  received: EddyEvent[];
  /** acks the held events `which` picks */
  ack: (which: (e: EddyEvent) => boolean) => void;
  /** the values `n` the sink got from partition `p`, in order */
  of: (p: number) => number[];
  /** what the runtime logged */
  lines: string[];
}

/** A runtime whose kafka onramp (commit on ack) feeds a sink that acks an event only when the test says so. */
async function holdingFlow(broker: string, topic: string, group: string): Promise<HoldingFlow> {
  const received: EddyEvent[] = [];
  const held = new Map<EddyEvent, () => void>();
  const sink: OfframpType<Record<string, never>> = {
    name: 'holder',
    defaultCodec: 'json',
    autoAck: true,
    configSchema: { type: 'object', additionalProperties: false, properties: {} },
    create: () => ({
      send(_payloads, event) {
        received.push(event);
        return new Promise<void>((resolve) => held.set(event, resolve));
      },
    }),
  };
  const lines: string[] = [];
  const log = (line: string) => void lines.push(line);
  const logger: Logger = { debug: log, info: log, warn: log, error: log };
  const runtime = new Runtime({ logger }).registerOfframp(sink);
  await runtime.start();
  runtime.publish('onramp', {
    id: 'in',
    type: 'kafka',
    config: {
      group_id: group,
      topics: [topic],
      brokers: [broker],
      rdkafka_options: { 'enable.auto.commit': 'false', 'auto.offset.reset': 'earliest', 'session.timeout.ms': '6000' },
    },
  });
  runtime.publish('pipeline', passthrough('p'));
  runtime.publish('offramp', { id: 'hold', type: 'holder' });
  runtime.publish('binding', {
    id: 'flow',
    links: { '/onramp/in/{instance}/out': ['/pipeline/p/{instance}/in'], '/pipeline/p/{instance}/out': ['/offramp/hold/{instance}/in'] },
  });
  await runtime.activate('binding', 'flow', 'main');
  return {
    runtime,
    received,
    lines,
    ack(which) {
      for (const [event, resolve] of [...held]) {
        if (!which(event)) continue;
        held.delete(event);
        resolve();
      }
    },
    of: (p) => received.filter((e) => partitionOf(e) === p).map(n),
  };
}

/** Produces {n} for n in [from, to) to one partition. */
function producer(peer: Peer, topic: string) {
  return (partition: number, from: number, to: number) =>
    peer.produce(
      topic,
      Array.from({ length: to - from }, (_, i) => ({ partition, value: JSON.stringify({ n: from + i }) })),
    );
}

/** A new two-partition topic with {n: 0..3} in each partition, and a holding flow of a new group reading it. */
async function fourInEachOfTwo(peer: Peer, broker: string, name: string) {
  const topic = unique(name);
  const group = unique('g');
  await peer.createTopic(topic, 2);
  const produce = producer(peer, topic);
  await produce(0, 0, 4);
  await produce(1, 0, 4);
  return { topic, group, produce, flow: await holdingFlow(broker, topic, group) };
}

describe('kafka onramp (against the real broker): a rebalance with events in flight', function () {
  this.timeout(90000);
  let broker: string;
  let peer: Peer;
  let runtime: Runtime | undefined;
  let other: Consumer | undefined;

  before(async function () {
    broker = brokerOf(await requireService(this, 'kafka'));
    peer = new Peer(broker);
  });
  after(async () => peer?.close());
  afterEach(async () => {
    await other?.close(true);
    await runtime?.shutdown();
    runtime = other = undefined;
  });

  it('does not hand over again what it kept, commits nothing of what it gave up, and ends with the end offsets committed', async () => {
    const { topic, group, produce, flow } = await fourInEachOfTwo(peer, broker, 'rejoin');
    runtime = flow.runtime;
    const { received, ack, of, lines } = flow;
    await eventually(() => received.length === 8, 30000, 'eight events, none acked');
    expect(joins(lines)).to.deep.equal([[0, 1]]);

    // a second member joins: the group is rebalanced, one partition each
    other = new Consumer({ clientId: 'eddy-test-other', bootstrapBrokers: [broker], groupId: group, sessionTimeout: 6000, heartbeatInterval: 1000 });
    const stream = await other.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: false, maxWaitTime: 100 });
    stream.on('data', () => undefined);
    // a join can follow another at once (the client's own rejoin after the one it was asked for): the last one counts
    await eventually(() => joins(lines).length >= 2 && lastJoin(lines).length === 1, 30000, 'eddy joined again, with one partition');
    const [kept] = lastJoin(lines);
    const gone = 1 - kept;

    // the kept partition is read again from offset 0; the marker comes after that range
    await produce(kept, 4, 5);
    await eventually(() => of(kept).includes(4), 30000, 'the marker of the kept partition');
    expect(of(kept), 'the kept partition: every event once').to.deep.equal([0, 1, 2, 3, 4]);
    expect(of(gone)).to.deep.equal([0, 1, 2, 3]);

    // the late acks of the partition given up first, then the kept one's: commits go out in order, one at a time
    ack((e) => partitionOf(e) === gone);
    await new Promise((resolve) => setImmediate(resolve));
    ack(() => true);
    await eventually(async () => (await peer.committed(group, topic))[kept] === 5, 30000, 'the kept partition committed to its end');
    expect((await peer.committed(group, topic))[gone], 'late acks of a partition another member owns do not commit').to.equal(-1);

    // the other member leaves: eddy gets both partitions, reads the one it gave up from its committed offset (none)
    await other.close(true);
    other = undefined;
    await eventually(() => lastJoin(lines).length === 2, 30000, 'eddy joined again, with both partitions');
    expect(lastJoin(lines)).to.deep.equal([0, 1]);
    await produce(kept, 5, 6);
    await eventually(() => of(kept).includes(5) && of(gone).length === 4 + 4, 30000, 'the second marker, and the partition taken back read again').catch(
      (err: unknown) => {
        throw new Error(`${(err as Error).message}: kept ${JSON.stringify(of(kept))}, gone ${JSON.stringify(of(gone))}\n${lines.slice(-15).join('\n')}`);
      },
    );
    expect(of(kept), 'the kept partition: every event once').to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(of(gone), 'the partition taken back: read again from its committed offset').to.deep.equal([0, 1, 2, 3, 0, 1, 2, 3]);
    ack(() => true);
    await eventually(
      async () => JSON.stringify(await peer.committed(group, topic)) === JSON.stringify({ [kept]: 6, [gone]: 4 }),
      30000,
      'the end offsets committed',
    );
  });
});

describe('kafka onramp (against the real broker): a group it cannot join', function () {
  this.timeout(60000);
  const kafka = useSharedKafka();
  let runtime: Runtime | undefined;

  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  it('fails naming the cause (a kafkajs member holds the group: no protocol in common), rather than retrying as if the brokers were gone', async () => {
    const topic = unique('mixed');
    const group = unique('g');
    await kafka.peer.createTopic(topic);
    // the peer is a kafkajs client: its assignor is RoundRobinAssigner, the onramp's roundrobin
    const kafkajs = kafka.peer.kafka.consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 1000, maxWaitTimeInMs: 100 });
    await kafkajs.connect();
    try {
      const joined = new Promise((resolve) => kafkajs.on(kafkajs.events.GROUP_JOIN, resolve));
      await kafkajs.subscribe({ topics: [topic], fromBeginning: true });
      await kafkajs.run({ eachMessage: async () => undefined });
      await joined;
      const flow = await holdingFlow(kafka.broker, topic, group);
      runtime = flow.runtime;
      await eventually(
        () => flow.lines.some((l) => l.includes('cannot join the group: INCONSISTENT_GROUP_PROTOCOL')),
        30000,
        'the onramp failing, naming the cause',
      );
      expect(flow.lines.filter((l) => l.includes('lost the brokers'))).to.deep.equal([]);
    } finally {
      await kafkajs.disconnect();
    }
  });
});

describe('kafka onramp: the client restarts (its broker restarted, a private Kafka) with events in flight', function () {
  this.timeout(120000);
  let kafka: PrivateService | undefined;
  let broker: string;
  let peer: Peer | undefined;
  let runtime: Runtime | undefined;

  before(async function () {
    kafka = await PrivateService.start(this, 'kafka');
    broker = brokerOf(kafka.address);
    peer = new Peer(broker);
  });
  after(async function () {
    this.timeout(120000);
    await runtime?.shutdown();
    await peer?.close();
    await kafka?.dispose();
  });

  it('keeps its partitions: what it handed over is not handed over again, and what was acked meanwhile is committed after the rejoin', async () => {
    const { topic, group, produce, flow } = await fourInEachOfTwo(peer!, broker, 'restart-rejoin');
    runtime = flow.runtime;
    const { received, ack, of, lines } = flow;
    await eventually(() => received.length === 8, 30000, 'eight events, none acked');
    ack((e) => n(e) < 2);
    await eventually(async () => JSON.stringify(await peer!.committed(group, topic)) === '{"0":2,"1":2}', 30000, 'offset 2 committed on both partitions');

    // the broker goes away: the client crashes and restarts; what is acked meanwhile cannot be committed
    await kafka!.stop();
    await eventually(() => lines.some((l) => l.includes('the consumer lost the brokers')), 60000, 'the consumer to notice');
    ack(() => true);
    await kafka!.start();
    await eventually(() => joins(lines).length >= 2, 60000, 'eddy joined again').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${lines.slice(-15).join('\n')}`);
    });
    expect(lastJoin(lines)).to.deep.equal([0, 1]);
    // read again from offset 2: 2 and 3 are skipped (acked, not committed); their commit goes out after the rejoin
    await eventually(async () => JSON.stringify(await peer!.committed(group, topic)) === '{"0":4,"1":4}', 30000, 'offset 4 committed on both partitions');
    await produce(0, 4, 5);
    await produce(1, 4, 5);
    await eventually(() => of(0).includes(4) && of(1).includes(4), 30000, 'the markers');
    expect([of(0), of(1)], 'every event once').to.deep.equal([
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4],
    ]);
    ack(() => true);
    await eventually(async () => JSON.stringify(await peer!.committed(group, topic)) === '{"0":5,"1":5}', 30000, 'the end offsets committed');
  });
});

describe('kafka onramp (an eddy process): dropped from its group while frozen, and its rejoin refused', function () {
  this.timeout(90000);
  const kafka = useSharedKafka();
  let dir: string;
  let child: EddyChild | undefined;
  let kafkajs: KafkajsConsumer | undefined;

  before(() => void (dir = mkdtempSync(join(tmpdir(), 'eddy-rejoin-'))));
  after(async () => {
    await child?.kill('SIGKILL');
    await kafkajs?.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it("fails the onramp naming the cause, and the process goes on (the client's failed rejoin is an `error` event: unheard, it would throw)", async () => {
    const input = unique('frozen-in');
    const group = unique('frozen');
    await kafka.peer.createTopic(input);
    await kafka.peer.createTopic(unique('frozen-out'));
    child = spawnEddy(relayConfig(dir, kafka.broker, group, input, unique('frozen-out')), 80000);
    await eventually(() => child!.assigned().length === 1, 30000, 'eddy in the group');
    // frozen past its session (6 s): the coordinator drops the member, and the group is empty
    child.child.kill('SIGSTOP');
    const admin = kafka.peer.kafka.admin();
    await admin.connect();
    try {
      await eventually(async () => (await admin.describeGroups([group])).groups[0].members.length === 0, 30000, 'the frozen member dropped');
    } finally {
      await admin.disconnect();
    }
    // a kafkajs member takes the group: its assignor (RoundRobinAssigner) is not one eddy's client speaks
    kafkajs = kafka.peer.kafka.consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 1000, maxWaitTimeInMs: 100 });
    await kafkajs.connect();
    const joined = new Promise((resolve) => kafkajs!.on(kafkajs!.events.GROUP_JOIN, resolve));
    await kafkajs.subscribe({ topics: [input], fromBeginning: true });
    await kafkajs.run({ eachMessage: async () => undefined });
    await joined;
    // thawed: its heartbeat learns it is unknown, the client rejoins by itself and is refused for good
    child.child.kill('SIGCONT');
    await eventually(
      () => child!.stderr().includes('cannot join the group: INCONSISTENT_GROUP_PROTOCOL') || child!.child.exitCode !== null,
      30000,
      'the onramp failing, naming the cause',
    );
    expect(child.child.exitCode, `the process is still running\n${child.stderr()}`).to.equal(null);
  });
});
