/**
 * The changelog store against the real broker: `ensure` creates compacted
 * topics with their source's partition count and refuses unusable ones;
 * `restore` gives back exactly what committed transactions wrote to one
 * partition (compared with an in-memory model), past the aborted
 * transactions the client's own read_committed filter lets through, in any
 * number of fetches.
 */
import { expect } from 'chai';
import { Admin, ConfigResourceTypes, Producer, findErrorBy } from '@platformatic/kafka';
import { changelogRecords, changelogTopic, ChangelogStore, type ChangelogOptions } from '../../../src/connectors/kafka/changelog';
import { kafkaSettings, type RdkafkaOptions } from '../../../src/connectors/kafka/options';
import type { Logger } from '../../../src/core/logger';
import type { StateChanges, StateValue } from '../../../src/core/state';
import { unique, useSharedKafka } from './helpers';

interface Line {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps what it was told. */
function recordingLogger(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** One write of a transaction: an entry's new value, or undefined (removed). */
type Write = [partition: number, key: string, value: StateValue];

/** What a restore must give: every committed write in order, a write moving its key to the end, a removal deleting it. */
function model(transactions: { commit: boolean; writes: Write[] }[], partition: number): Map<string, StateValue> {
  const state = new Map<string, StateValue>();
  for (const { writes } of transactions.filter((t) => t.commit)) {
    for (const [p, key, value] of writes) {
      if (p !== partition) continue;
      state.delete(key);
      if (value !== undefined) state.set(key, value);
    }
  }
  return state;
}

/** The records of some writes, through changelogRecords: a key written twice goes in two change sets, in order. */
function recordsOf(topic: string, writes: Write[]) {
  const records: ReturnType<typeof changelogRecords> = [];
  let changes = new Map<string, StateValue>();
  let partition = -1;
  const flush = () => {
    if (changes.size > 0) records.push(...changelogRecords(topic, partition, changes));
    changes = new Map();
  };
  for (const [p, key, value] of writes) {
    if (p !== partition || changes.has(key)) flush();
    partition = p;
    changes.set(key, value);
  }
  flush();
  return records;
}

const range = (n: number, f: (i: number) => Write): Write[] => Array.from({ length: n }, (_, i) => f(i));
const key = (i: number) => `k${String(i).padStart(3, '0')}`;
/** ~400 bytes: enough that the scenario needs many fetches of 16 KB; a bigint beyond 2^53 checks the exact reading */
const value = (i: number, round: string) => ({ n: i, round, big: 2n ** 64n + BigInt(i), text: 'é€😀', pad: 'x'.repeat(300) });

describe('changelogTopic', () => {
  it('is eddy-<group>-<pipeline>-<node>-<source>-changelog for plain names', () => {
    expect(changelogTopic('orders', 'totals', 'window', 'orders.v2')).to.equal('eddy-orders-totals-window-orders.v2-changelog');
  });

  it('replaces the characters Kafka does not take, and tells the result apart from the same name written plainly', () => {
    const name = changelogTopic('g/1', 'p q', 'n:ö', 't');
    expect(name).to.match(/^eddy-g_1-p_q-n__-t-[0-9a-f]{16}-changelog$/);
    expect(name).to.not.equal(changelogTopic('g_1', 'p_q', 'n__', 't'));
    expect(changelogTopic('g_1', 'p_q', 'n__', 't')).to.equal('eddy-g_1-p_q-n__-t-changelog');
  });

  it('caps the length at 249 with a stable hash that keeps long names apart', () => {
    const long = 'a'.repeat(300);
    const one = changelogTopic('g', 'p', 'n', long);
    const other = changelogTopic('g', 'p', 'n', `${long}b`);
    expect(one).to.have.length(249);
    expect(one).to.match(/^eddy-g-p-n-a+-[0-9a-f]{16}-changelog$/);
    expect(one, 'the same names give the same topic, every time').to.equal(changelogTopic('g', 'p', 'n', 'a'.repeat(300)));
    expect(other).to.have.length(249).and.not.equal(one);
    // a plain name just under the cap stays plain; one character more is cut and hashed
    const fits = 'b'.repeat(249 - 'eddy-g-p-n--changelog'.length);
    expect(changelogTopic('g', 'p', 'n', fits)).to.equal(`eddy-g-p-n-${fits}-changelog`);
    expect(changelogTopic('g', 'p', 'n', `${fits}b`))
      .to.have.length(249)
      .and.match(/-[0-9a-f]{16}-changelog$/);
  });

  it('gives distinct inputs distinct names, however the parts split', () => {
    const inputs: [string, string, string, string][] = [
      ['a-b', 'c', 'n', 't'],
      ['a', 'b-c', 'n', 't'],
      ['a', 'b', 'c-n', 't'],
      ['a', 'b', 'c', 'n-t'],
      ['a', 'b', 'c', 'n'],
      ['a/b', 'c', 'n', 't'],
      ['a_b', 'c', 'n', 't'],
      ['a?b', 'c', 'n', 't'],
      ['', 'a', 'b', 'c'],
      ['a', '', 'b', 'c'],
      ['a,b', 'c', 'n', 't'],
      ['a', 'b,c', 'n', 't'],
    ];
    const names = inputs.map((i) => changelogTopic(...i));
    expect(new Set(names).size, names.join('\n')).to.equal(inputs.length);
    for (const name of names) expect(name).to.match(/^[A-Za-z0-9._-]{1,249}$/);
  });
});

describe('changelogRecords', () => {
  it('writes the key as UTF-8, the value as compact JSON, a removed entry as a null value, to the source partition', () => {
    const changes: StateChanges = new Map<string, StateValue>([
      ['a€', { n: 1, big: 2n ** 70n }],
      ['gone', undefined],
      ['null', null],
    ]);
    const records = changelogRecords('cl', 4, changes);
    expect(records.map((r) => [r.topic, r.partition, r.key?.toString('utf8'), r.value === null ? null : r.value?.toString('utf8')])).to.deep.equal([
      ['cl', 4, 'a€', '{"n":1,"big":1180591620717411303424}'],
      ['cl', 4, 'gone', null],
      ['cl', 4, 'null', 'null'],
    ]);
  });

  it('refuses a key UTF-8 cannot carry, naming it', () => {
    expect(() => changelogRecords('cl', 0, new Map([['a\ud800', 1]]))).to.throw(/cl\/0.*"a\\ud800"/);
  });
});

describe('ChangelogStore (against the real broker)', function () {
  this.timeout(120_000);
  const kafka = useSharedKafka();
  const topics: string[] = [];
  const clients: { close(force?: boolean): Promise<void> }[] = [];
  let admin: Admin;

  before(function () {
    admin = new Admin({ clientId: 'eddy-test-changelog', bootstrapBrokers: [kafka.broker], autocreateTopics: false });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  });
  after(async () => {
    if (!admin) return;
    // only those that exist: a name the broker does not know fails the whole request
    const existing = new Set(await admin.listTopics());
    const created = topics.filter((t) => existing.has(t));
    if (created.length > 0)
      await admin
        .deleteTopics({ topics: created })
        .catch((err: unknown) => console.log(`      could not delete ${created.join(', ')}: ${err instanceof Error ? err.message : String(err)}`));
    await admin.close();
  });

  function store(rdkafka: RdkafkaOptions = {}, options: ChangelogOptions = {}) {
    const logger = recordingLogger();
    const s = new ChangelogStore(kafkaSettings('onramp', rdkafka), [kafka.broker], 'eddy-test-changelog', logger, options);
    clients.push(s);
    return { store: s, logger };
  }

  /** A source topic and its changelog (through `ensure`), both deleted after the tests. */
  async function changelogFor(partitions: number): Promise<string> {
    const source = unique('cl-src');
    await kafka.peer.createTopic(source, partitions);
    topics.push(source);
    const changelog = changelogTopic(unique('cl-g'), 'p', 'n', source);
    topics.push(changelog);
    const { store: s } = store();
    await s.ensure([{ changelog, source }]);
    return changelog;
  }

  /** A transactional producer as the exactly-once writer builds it (docs: /work/main/.git/eos-research.md §1, §6). */
  function transactionalProducer(): Producer {
    const producer = new Producer({
      clientId: 'eddy-test-changelog',
      bootstrapBrokers: [kafka.broker],
      autocreateTopics: false,
      idempotent: true,
      transactionalId: unique('cl-tx'),
      producerId: -1n,
      producerEpoch: -1,
      timeout: 30_000,
      retries: 5,
      // the previous transaction's markers are still being written: try again soon, not after the default second
      retryDelay: (_client, _op, _attempt, _retries, err) => (findErrorBy(err, 'apiId', 'CONCURRENT_TRANSACTIONS') ? 20 : 250),
    });
    clients.push(producer);
    return producer;
  }

  async function write(producer: Producer, topic: string, transactions: { commit: boolean; writes: Write[] }[]): Promise<void> {
    for (const { commit, writes } of transactions) {
      const tx = await producer.beginTransaction();
      await tx.send({ messages: recordsOf(topic, writes) });
      if (commit) await tx.commit();
      else await tx.abort();
    }
  }

  async function topicInfo(topic: string): Promise<{ id: string; partitions: number; policy: unknown }> {
    const metadata = (await admin.metadata({ topics: [topic], forceUpdate: true })).topics.get(topic);
    const [config] = await admin.describeConfigs({
      resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configurationKeys: ['cleanup.policy'] }],
    });
    return { id: metadata!.id, partitions: metadata!.partitionsCount, policy: config.configs.find((c) => c.name === 'cleanup.policy')?.value };
  }

  describe('ensure', () => {
    it('creates a compacted topic with the source partition count; a second ensure changes nothing', async () => {
      const source = unique('cl-src');
      await kafka.peer.createTopic(source, 3);
      topics.push(source);
      const changelog = changelogTopic(unique('cl-g'), 'pipe', 'node', source);
      topics.push(changelog);
      const { store: s, logger } = store();
      await s.ensure([{ changelog, source }]);
      const created = await topicInfo(changelog);
      expect(created).to.include({ partitions: 3, policy: 'compact' });
      expect(logger.lines.filter((l) => l.msg.startsWith('created changelog topic'))).to.have.length(1);

      await s.ensure([{ changelog, source }]);
      expect(await topicInfo(changelog), 'the same topic').to.deep.equal(created);
      expect(
        logger.lines.filter((l) => l.msg.startsWith('created changelog topic')),
        'not created again',
      ).to.have.length(1);
    });

    it('refuses an existing changelog with fewer partitions than its source, naming it and what to do', async () => {
      const source = unique('cl-src');
      const changelog = unique('cl-few');
      await kafka.peer.createTopic(source, 3);
      await kafka.peer.createTopic(changelog, 2, { 'cleanup.policy': 'compact' });
      topics.push(source, changelog);
      const { store: s } = store();
      const err = await s.ensure([{ changelog, source }]).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message)
        .to.include(`changelog topic ${changelog} has 2 partitions, fewer than the 3 of its source topic ${source}`)
        .and.include('--partitions 3');
    });

    it('refuses an existing changelog that is not compacted, naming it', async () => {
      const source = unique('cl-src');
      const changelog = unique('cl-del');
      await kafka.peer.createTopic(source, 1);
      await kafka.peer.createTopic(changelog, 1, { 'cleanup.policy': 'compact,delete' });
      topics.push(source, changelog);
      const { store: s } = store();
      const err = await s.ensure([{ changelog, source }]).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).to.include(`changelog topic ${changelog} has cleanup.policy=compact,delete`).and.include('cleanup.policy=compact');
    });

    it('names the topic and the broker reason when the broker refuses to create it, and how to create it beforehand', async () => {
      const source = unique('cl-src');
      await kafka.peer.createTopic(source, 1);
      topics.push(source);
      const changelog = unique('cl-refused');
      topics.push(changelog);
      // a one-broker cluster cannot hold 7 replicas: the broker refuses, as it would a creation without the right
      const { store: s } = store({}, { replicationFactor: 7 });
      const err = await s.ensure([{ changelog, source }]).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message)
        .to.include(`changelog topic ${changelog}: the broker refused to create it (INVALID_REPLICATION_FACTOR`)
        .and.include('kafka-topics.sh');
      expect(await admin.listTopics()).to.not.include(changelog);
    });

    it('names a source topic that does not exist', async () => {
      const source = unique('cl-nosuch');
      const { store: s } = store();
      const err = await s.ensure([{ changelog: changelogTopic('g', 'p', 'n', source), source }]).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).to.include(`source topic ${source}`);
      expect(await admin.listTopics()).to.not.include(source);
    });
  });

  describe('restore', () => {
    // committed, aborted, committed, aborted (the same producer), committed: the client's filter leaks the first of
    // two aborted transactions in one response, and one whose marker is in a later response
    const scenario: { commit: boolean; writes: Write[] }[] = [
      {
        commit: true,
        writes: [...range(200, (i) => [0, key(i), value(i, 'one')]), ...range(50, (i) => [1, key(i), value(i, 'p1')]), [1, 'only-p1', 1]],
      },
      {
        commit: false,
        writes: [
          ...range(100, (i) => [0, key(i), value(i, 'aborted-1')]),
          ...range(50, (i) => [0, key(100 + i), undefined]),
          ...range(100, (i) => [0, `ghost-a-${i}`, value(i, 'aborted-1')]),
          [1, key(0), value(0, 'aborted-1')],
        ],
      },
      {
        commit: true,
        writes: [
          ...range(10, (i) => [0, key(150 + i), undefined]),
          [0, key(10), value(10, 'three')],
          [0, key(5), value(5, 'three')],
          [0, '', null],
          [0, '€', 'euro'],
        ],
      },
      {
        commit: false,
        writes: [...range(100, (i) => [0, `ghost-b-${i}`, value(i, 'aborted-2')]), [0, key(10), value(10, 'aborted-2')], [0, key(5), undefined]],
      },
      {
        commit: true,
        writes: [
          [0, key(7), value(7, 'five-a')],
          [0, key(7), undefined],
          [0, key(7), value(7, 'five-c')],
          [0, key(0), value(0, 'five')],
          [1, key(1), undefined],
        ],
      },
      {
        commit: true,
        writes: [
          [0, key(150), value(150, 'six')],
          [0, key(199), undefined],
          [0, key(5), value(5, 'six')],
        ],
      },
    ];

    let changelog: string;
    before(async function () {
      if (!kafka.broker) this.skip();
      changelog = await changelogFor(3);
      await write(transactionalProducer(), changelog, scenario);
    });

    for (const [label, rdkafka] of [
      ['in one fetch', {}],
      ['in fetches of 16 KB', { 'max.partition.fetch.bytes': '16384' }],
    ] as const) {
      it(`gives back what the committed transactions wrote, in the order of the last writes, ${label}`, async () => {
        const { store: s, logger } = store(rdkafka);
        const expected = model(scenario, 0);
        expect(expected.size, 'the model').to.equal(200 - 10 + 2 + 1 - 1);
        const restored = await s.restore(changelog, 0);
        expect([...restored.keys()]).to.deep.equal([...expected.keys()]);
        expect([...restored]).to.deep.equal([...expected]);
        expect([...restored.keys()].filter((k) => k.startsWith('ghost'))).to.deep.equal([]);
        const fetches = logger.lines.find((l) => l.msg.includes('restored'))?.fields?.fetches as number;
        // one response holds both aborted transactions (the client's filter leaks the first). With 16 KB each response
        // holds one transaction's batch (a batch larger than the limit comes alone), so an aborted transaction's
        // data and its marker arrive in different responses (the client's filter leaks that too)
        if (label === 'in one fetch') expect(fetches).to.equal(1);
        else expect(fetches).to.be.greaterThan(4);
      });
    }

    it('reads one partition only', async () => {
      const { store: s } = store({ 'max.partition.fetch.bytes': '16384' });
      const restored = await s.restore(changelog, 1);
      expect([...restored]).to.deep.equal([...model(scenario, 1)]);
      expect(restored.get(key(0))).to.deep.equal(value(0, 'p1'));
      expect(restored.has(key(1)), 'removed in partition 1').to.equal(false);
    });

    it('gives an empty map for an empty partition', async () => {
      const { store: s } = store();
      expect((await s.restore(changelog, 2)).size).to.equal(0);
    });

    it('names the partition when the topic has not got it', async () => {
      const { store: s } = store();
      const err = await s.restore(changelog, 3).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).to.equal(`changelog ${changelog}/3: the topic has 3 partitions`);
    });

    it('restores several partitions at once, one after the other', async () => {
      const { store: s } = store({ 'max.partition.fetch.bytes': '16384' });
      const [p0, p1, p2] = await Promise.all([s.restore(changelog, 0), s.restore(changelog, 1), s.restore(changelog, 2)]);
      expect([...p0]).to.deep.equal([...model(scenario, 0)]);
      expect([...p1]).to.deep.equal([...model(scenario, 1)]);
      expect(p2.size).to.equal(0);
    });

    it('stops before a transaction still open, within its wait, and reads it once it is committed', async () => {
      const topic = await changelogFor(1);
      const producer = transactionalProducer();
      await write(producer, topic, [{ commit: true, writes: [[0, 'a', 1]] }]);
      const open = await producer.beginTransaction();
      await open.send({ messages: recordsOf(topic, [[0, 'b', 2]]) });
      const { store: s, logger } = store({}, { stableWaitMs: 300 });
      expect([...(await s.restore(topic, 0))]).to.deep.equal([['a', 1]]);
      expect(logger.lines.find((l) => l.level === 'warn')?.msg).to.include(`changelog ${topic}/0: a transaction is still open at offset 2 (high watermark 3)`);
      await open.commit();
      expect([...(await s.restore(topic, 0))]).to.deep.equal([
        ['a', 1],
        ['b', 2],
      ]);
    });

    it('names the topic, partition and offset of a record whose value is not JSON, or that has no key', async () => {
      // not compacted: a compacted topic refuses a record without a key
      const topic = unique('cl-bad');
      await kafka.peer.createTopic(topic, 2);
      topics.push(topic);
      const producer = new Producer({ clientId: 'eddy-test-changelog', bootstrapBrokers: [kafka.broker], autocreateTopics: false });
      clients.push(producer);
      await producer.send({
        messages: [
          { topic, partition: 1, key: Buffer.from('a'), value: Buffer.from('1') },
          { topic, partition: 1, key: Buffer.from('b'), value: Buffer.from('{"not json"') },
          { topic, partition: 0, key: Buffer.from('a'), value: Buffer.from('1') },
          { topic, partition: 0, value: Buffer.from('2') },
        ],
      });
      const { store: s } = store();
      const notJson = await s.restore(topic, 1).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(notJson?.message).to.match(new RegExp(`^changelog ${topic}/1: the value of the record at offset 1 \\(key "b"\\) is not JSON: `));
      const noKey = await s.restore(topic, 0).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(noKey?.message).to.equal(`changelog ${topic}/0: the record at offset 1 has no key`);
    });
  });
});
