/**
 * Changelog topics: where the state of a stateful node lives in Kafka, for
 * exactly-once processing (like Kafka Streams' exactly_once_v2).
 *
 * Each stateful node has one compacted topic per source topic; partition p
 * of it holds the state of source partition p as entries, key -> value
 * (core/state.ts), written inside the same transactions as the outputs
 * and the input offsets. After a takeover or a restart a partition's state
 * is read back from its changelog before the partition is processed again.
 *
 * The restore reads with the client's low-level `fetch()` on a consumer that
 * never joins a group (a group would take every partition of the topic, and
 * stopping a stream at an offset is awkward). Under read_committed the
 * broker sends data only up to the last stable offset, with the list of
 * aborted transactions, but @platformatic/kafka 2.12.1 filters that list
 * wrongly (the first of two aborted transactions of one producer in a
 * response leaks, and so does one whose abort marker is in a later
 * response) and leaves the control batches in. So the batches are filtered
 * again here, as the Java client does (`AbortedTransactions`). The library
 * only ever removes too little, so filtering again on top of it is safe.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin, Consumer, fetchV17, KafkaRecord, MessageToProduce, RecordsBatch } from '@platformatic/kafka';
import { compactJson } from '../../codecs/json/compact';
import { parsePrecise } from '../../codecs/json/precise-parse';
import type { Logger } from '../../core/logger';
import type { StateChanges, StateValue } from '../../core/state';
import { baseOptions, brokerAddress, platformatic, rootMessage, type KafkaSettings } from './options';

const {
  Admin: AdminClass,
  Consumer: ConsumerClass,
  ConfigResourceTypes,
  FetchIsolationLevels,
  ListOffsetTimestamps,
  findErrorBy,
} = platformatic('kafka changelogs (exactly-once state)');

type ChangelogRecord = MessageToProduce;
type FetchResponse = fetchV17.FetchResponse;
type AbortedTransaction = fetchV17.FetchResponsePartitionAbortedTransaction;

const PREFIX = 'eddy';
const SUFFIX = '-changelog';
/** Kafka's longest topic name */
const MAX_TOPIC_LENGTH = 249;
/** hex digits of the hash that tells apart names that would otherwise be the same (64 bits) */
const HASH_LENGTH = 16;

/**
 * The changelog topic of one stateful node for one source topic:
 * `eddy-<group>-<pipeline>-<node>-<sourceTopic>-changelog`, characters
 * outside [A-Za-z0-9._-] replaced by '_', at most 249 characters.
 *
 * Two different nodes must never share a changelog (their states would mix),
 * so a hash of the four names goes before `-changelog` whenever the readable
 * name alone could stand for other names too: when it is too long and cut,
 * when a character was replaced ('a/b' and 'a_b'), or when a name holds the
 * separator '-' (group 'a-b', pipeline 'c' and group 'a', pipeline 'b-c').
 * Names without these keep the plain form, which people can type.
 */
export function changelogTopic(group: string, pipeline: string, node: string, sourceTopic: string): string {
  const parts = [group, pipeline, node, sourceTopic];
  const readable = [PREFIX, ...parts].join('-').replace(/[^A-Za-z0-9._-]/g, '_');
  const ambiguous = parts.some((part) => /[^A-Za-z0-9._]/.test(part));
  if (!ambiguous && readable.length + SUFFIX.length <= MAX_TOPIC_LENGTH) return readable + SUFFIX;
  // JSON keeps the names apart (a name holding a comma or a quote is escaped)
  const hash = createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, HASH_LENGTH);
  return `${readable.slice(0, MAX_TOPIC_LENGTH - SUFFIX.length - HASH_LENGTH - 1)}-${hash}${SUFFIX}`;
}

/**
 * The records of one partition's changes (core/state.ts StateChanges),
 * in the order of the changes: key = the entry key as UTF-8, value = its
 * compact JSON (exact for bigints), or null for a removed entry (a
 * tombstone, which compaction eventually drops), partition = the source
 * partition number. Throws on a key UTF-8 cannot carry (a lone surrogate):
 * it would come back as another key.
 */
export function changelogRecords(topic: string, partition: number, changes: StateChanges): ChangelogRecord[] {
  const records: ChangelogRecord[] = [];
  for (const [key, value] of changes) {
    if (!key.isWellFormed())
      throw new Error(`changelog ${topic}/${partition}: the entry key ${JSON.stringify(key)} holds a lone surrogate, which UTF-8 cannot carry`);
    records.push({
      topic,
      partition,
      key: Buffer.from(key, 'utf8'),
      // null is what the client writes as a null value (so does undefined); the type only knows Buffers
      value: value === undefined ? (null as unknown as Buffer) : Buffer.from(compactJson(value), 'utf8'),
    });
  }
  return records;
}

const IS_TRANSACTIONAL = 0x10;
const IS_CONTROL = 0x20;
/** the type of a control record (its key: int16 version, int16 type) that ends an aborted transaction; 1 is COMMIT */
const ABORT_MARKER = 0;

/**
 * Which batches of one fetch response hold committed records, by the Java
 * client's algorithm (FetchCollector/CompletedFetch): the broker lists the
 * aborted transactions that overlap the response as (producer id, first
 * offset); going through the batches in offset order, a producer is aborting
 * from its transaction's first offset until its ABORT marker, and its
 * transactional batches in between are skipped. Control batches (the commit
 * and abort markers) are never records of the state. A transaction whose
 * marker lies beyond the response is listed again with the next response,
 * so each response gets a filter of its own.
 */
export class AbortedTransactions {
  private readonly aborted: AbortedTransaction[];
  private next = 0;
  private readonly aborting = new Set<bigint>();

  constructor(aborted: readonly AbortedTransaction[] | null | undefined) {
    this.aborted = [...(aborted ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  /** Whether `batch` holds committed data; call it for every batch of the response, in offset order. */
  committed(batch: RecordsBatch): boolean {
    const last = batch.firstOffset + BigInt(batch.lastOffsetDelta);
    while (this.next < this.aborted.length && this.aborted[this.next].firstOffset <= last) this.aborting.add(this.aborted[this.next++].producerId);
    if (batch.attributes & IS_CONTROL) {
      // compaction may have emptied a control batch: then it ends nothing (its transaction's data is gone as well)
      const key = batch.records[0]?.key;
      if (key && key.length >= 4 && key.readInt16BE(2) === ABORT_MARKER) this.aborting.delete(batch.producerId);
      return false;
    }
    return !(batch.attributes & IS_TRANSACTIONAL && this.aborting.has(batch.producerId));
  }
}

export interface ChangelogOptions {
  /** replicas of a changelog topic `ensure` creates; by default min(3, the brokers in the cluster) */
  replicationFactor?: number;
  /**
   * How long `restore` waits for the last stable offset to reach the high
   * watermark (5 s by default). A transaction's commit marker reaches each
   * partition a moment after `commit()` answered; a restore taking the end
   * before it would miss that transaction's records.
   */
  stableWaitMs?: number;
}

/** failed fetches of one restore in a row (each one the client's retries already) before it gives up */
const FETCH_ATTEMPTS = 3;
/** fetches in a row that bring nothing while records remain, before a restore gives up */
const EMPTY_FETCHES = 20;
/** how long `ensure` waits for a topic it created to have a leader for every partition */
const LEADERS_WAIT_MS = 30_000;

/** Reading the changelog topics, and creating them. */
export class ChangelogStore {
  private readonly brokers: string[];
  private readonly options: Required<Pick<ChangelogOptions, 'stableWaitMs'>> & ChangelogOptions;
  private admin: Admin | undefined;
  private consumer: Consumer | undefined;
  /**
   * Restores run one at a time: the client keeps one fetch session per
   * broker, which concurrent fetches of different partitions keep breaking
   * (measured: 4 partitions at once took 1.6 s, one after the other 0.65 s).
   */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(
    private readonly settings: KafkaSettings,
    brokers: string[],
    private readonly clientId: string,
    private readonly logger: Logger,
    options: ChangelogOptions = {},
  ) {
    this.brokers = brokers.map(brokerAddress);
    this.options = { stableWaitMs: 5000, ...options };
  }

  /**
   * Creates each missing changelog topic: compacted, with as many partitions
   * as its source topic, `replicationFactor` replicas. An existing one is
   * checked: fewer partitions than its source, or a cleanup.policy other than
   * compact, is refused with an Error that names the topic and what to do.
   * Where the brokers refuse to create topics (no authorisation), the Error
   * names the topic, the broker's reason and the command that creates it.
   */
  async ensure(topics: readonly { changelog: string; source: string }[]): Promise<void> {
    const wanted = new Map<string, string>();
    for (const { changelog, source } of topics) {
      const other = wanted.get(changelog);
      if (other !== undefined && other !== source) throw new Error(`changelog topic ${changelog}: asked for two source topics, ${other} and ${source}`);
      wanted.set(changelog, source);
    }
    if (wanted.size === 0) return;
    const admin = this.adminClient();
    let existing: Set<string>;
    try {
      existing = new Set(await admin.listTopics());
    } catch (err) {
      throw new Error(`changelog topics ${[...wanted.keys()].join(', ')}: cannot list the topics: ${rootMessage(err)}`);
    }
    const sources = new Map<string, number>();
    let brokerCount = 1;
    for (const source of new Set(wanted.values())) {
      // the metadata of a missing topic is retried for seconds before it fails
      if (!existing.has(source)) throw new Error(`source topic ${source} does not exist: its changelog cannot be made`);
      try {
        const metadata = await admin.metadata({ topics: [source], forceUpdate: true, autocreateTopics: false });
        sources.set(source, metadata.topics.get(source)?.partitionsCount ?? 0);
        brokerCount = metadata.brokers.size;
      } catch (err) {
        throw new Error(`source topic ${source}: cannot read its partition count for its changelog: ${rootMessage(err)}`);
      }
    }
    const replicas = this.options.replicationFactor ?? Math.min(3, brokerCount);
    for (const [changelog, source] of wanted) {
      const partitions = sources.get(source) ?? 0;
      // another process may create it between the listing and here: then it is checked as an existing one
      if (existing.has(changelog) || !(await this.create(changelog, partitions, replicas))) await this.check(changelog, source, partitions);
    }
  }

  /**
   * The committed state in partition `partition` of `changelog`, read from
   * its earliest offset to its last stable offset: the entries in the order
   * of their last write (a later write of a key moves it to the end; a
   * tombstone deletes it), values parsed with parsePrecise. A record that
   * cannot be decoded gives an Error naming the topic, partition and offset.
   */
  restore(changelog: string, partition: number): Promise<Map<string, StateValue>> {
    const run = this.queue.then(
      () => this.read(changelog, partition),
      () => this.read(changelog, partition),
    );
    this.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    const clients = [this.admin, this.consumer];
    this.admin = undefined;
    this.consumer = undefined;
    for (const client of clients) await client?.close().catch((err: unknown) => this.logger.debug(`changelog store: close: ${rootMessage(err)}`));
  }

  private async read(topic: string, partition: number): Promise<Map<string, StateValue>> {
    const where = `changelog ${topic}/${partition}`;
    const started = performance.now();
    let leader = await this.leader(topic, partition, where);
    const { start, end } = await this.bounds(topic, partition, where);
    const entries = new Map<string, StateValue>();
    let offset = start;
    let fetches = 0;
    let failures = 0;
    let empty = 0;
    while (offset < end) {
      let response: FetchResponse;
      try {
        fetches++;
        response = await this.consumerClient().fetch({
          node: leader.node,
          maxWaitTime: 0,
          minBytes: 1,
          maxBytes: this.settings.consumer.maxBytes,
          isolationLevel: FetchIsolationLevels.READ_COMMITTED,
          topics: [
            {
              topicId: leader.topicId,
              partitions: [
                {
                  partition,
                  fetchOffset: offset,
                  partitionMaxBytes: this.settings.consumer.maxBytesPerPartition,
                  currentLeaderEpoch: leader.epoch,
                  lastFetchedEpoch: -1,
                },
              ],
            },
          ],
        });
      } catch (err) {
        if (++failures >= FETCH_ATTEMPTS) throw new Error(`${where}: cannot read at offset ${offset} (of ${start} to ${end}): ${rootMessage(err)}`);
        // the leader may have moved: ask again where the partition is
        leader = await this.leader(topic, partition, where);
        continue;
      }
      failures = 0;
      // with a fetch session the broker leaves out a partition that has nothing new
      const data = response.responses.find((t) => t.topicId === leader.topicId)?.partitions.find((p) => p.partitionIndex === partition);
      const batches = data?.records ?? [];
      if (batches.length === 0) {
        // data up to `end` is stable and the broker sends at least one batch past the offset, so this is a moment (a new leader catching up)
        if (++empty >= EMPTY_FETCHES)
          throw new Error(`${where}: no records at offset ${offset} after ${empty} fetches, though the last stable offset is ${end}`);
        await sleep(Math.min(500, 20 * empty));
        continue;
      }
      empty = 0;
      const filter = new AbortedTransactions(data?.abortedTransactions);
      let next = offset;
      for (const batch of batches) {
        if (filter.committed(batch)) {
          for (const record of batch.records) {
            const at = batch.firstOffset + BigInt(record.offsetDelta);
            // a batch can begin before the offset asked for; the end is where the state was stable
            if (at >= offset && at < end) this.apply(entries, record, where, at);
          }
        }
        // markers and aborted batches are skipped, but read past all the same
        const after = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n;
        if (after > next) next = after;
      }
      offset = next;
    }
    const ms = Math.round(performance.now() - started);
    this.logger.debug(`${where}: restored ${entries.size} entries from offsets ${start} to ${end} in ${ms} ms`, { entries: entries.size, fetches, ms });
    return entries;
  }

  private apply(entries: Map<string, StateValue>, record: KafkaRecord, where: string, at: bigint): void {
    if (record.key === null) throw new Error(`${where}: the record at offset ${at} has no key`);
    let key: string;
    try {
      key = this.decoder.decode(record.key);
    } catch {
      throw new Error(`${where}: the key of the record at offset ${at} is not UTF-8`);
    }
    // delete first: a later write moves the entry to the end, the order of last writes
    entries.delete(key);
    if (record.value === null) return;
    try {
      entries.set(key, parsePrecise(this.decoder.decode(record.value)));
    } catch (err) {
      throw new Error(`${where}: the value of the record at offset ${at} (key ${JSON.stringify(key)}) is not JSON: ${(err as Error).message}`);
    }
  }

  /** Where the partition is read: the topic's id (fetch wants it) and the partition's leader. */
  private async leader(topic: string, partition: number, where: string): Promise<{ topicId: string; node: number; epoch: number }> {
    let count: number;
    try {
      const metadata = (await this.consumerClient().metadata({ topics: [topic], forceUpdate: true, autocreateTopics: false })).topics.get(topic);
      const p = metadata?.partitions[partition];
      if (metadata && p) return { topicId: metadata.id, node: p.leader, epoch: p.leaderEpoch };
      count = metadata?.partitionsCount ?? 0;
    } catch (err) {
      throw new Error(`${where}: cannot find the partition: ${rootMessage(err)}`);
    }
    throw new Error(`${where}: the topic has ${count} partitions`);
  }

  /**
   * From the earliest offset to the last stable offset. A committed
   * transaction's marker may not be there yet (the stable offset stops
   * before its records), so while the stable offset is below the high
   * watermark it is asked again, within `stableWaitMs`. What is still open
   * then is a transaction that has not ended: a fenced writer's, which the
   * broker aborts when it times out, and which is not restored.
   */
  private async bounds(topic: string, partition: number, where: string): Promise<{ start: bigint; end: bigint }> {
    const start = await this.offset(topic, partition, ListOffsetTimestamps.EARLIEST, FetchIsolationLevels.READ_UNCOMMITTED, where);
    const high = await this.offset(topic, partition, ListOffsetTimestamps.LATEST, FetchIsolationLevels.READ_UNCOMMITTED, where);
    const deadline = Date.now() + this.options.stableWaitMs;
    let stable = await this.offset(topic, partition, ListOffsetTimestamps.LATEST, FetchIsolationLevels.READ_COMMITTED, where);
    while (stable < high && Date.now() < deadline) {
      await sleep(20);
      stable = await this.offset(topic, partition, ListOffsetTimestamps.LATEST, FetchIsolationLevels.READ_COMMITTED, where);
    }
    if (stable < high) {
      this.logger.warn(
        `${where}: a transaction is still open at offset ${stable} (high watermark ${high}) after ${this.options.stableWaitMs} ms; restoring what was committed before it`,
      );
    }
    return { start, end: stable };
  }

  private async offset(topic: string, partition: number, timestamp: bigint, isolationLevel: 0 | 1, where: string): Promise<bigint> {
    try {
      const listed = await this.adminClient().listOffsets({
        topics: [{ name: topic, partitions: [{ partitionIndex: partition, timestamp }] }],
        isolationLevel,
      });
      const found = listed.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition);
      if (found) return found.offset;
    } catch (err) {
      throw new Error(`${where}: cannot list its offsets: ${rootMessage(err)}`);
    }
    throw new Error(`${where}: the broker listed no offset for it`);
  }

  /** Creates a changelog topic; false when it exists already (created a moment ago by another process). */
  private async create(topic: string, partitions: number, replicas: number): Promise<boolean> {
    try {
      await this.adminClient().createTopics({ topics: [{ topic, partitions, replicas }], configs: [{ name: 'cleanup.policy', value: 'compact' }] });
    } catch (err) {
      if (findErrorBy(err as Error, 'apiId', 'TOPIC_ALREADY_EXISTS')) return false;
      throw new Error(
        `changelog topic ${topic}: the broker refused to create it (${rootMessage(err)}); where eddy may not create topics, create it beforehand: ` +
          `kafka-topics.sh --bootstrap-server ${this.brokers[0]} --create --topic ${topic} --partitions ${partitions} --replication-factor ${replicas} --config cleanup.policy=compact`,
      );
    }
    await this.waitForLeaders(topic, partitions);
    this.logger.info(`created changelog topic ${topic} (${partitions} partitions, ${replicas} replicas, compacted)`);
    return true;
  }

  /** The first transaction that writes the new topic would be refused until every partition has a leader. */
  private async waitForLeaders(topic: string, partitions: number): Promise<void> {
    const deadline = Date.now() + LEADERS_WAIT_MS;
    let last = 'no answer';
    for (;;) {
      try {
        const metadata = (await this.adminClient().metadata({ topics: [topic], forceUpdate: true, autocreateTopics: false })).topics.get(topic);
        // partitions is sparse (indexed by partition): filter skips a partition the answer left out
        const led = metadata?.partitions.filter((p) => p.leader >= 0).length ?? 0;
        if (led >= partitions) return;
        last = `${led} of ${partitions} partitions have a leader`;
      } catch (err) {
        last = rootMessage(err);
      }
      if (Date.now() >= deadline) throw new Error(`changelog topic ${topic}: created, but not ready after ${LEADERS_WAIT_MS} ms (${last})`);
      await sleep(100);
    }
  }

  /** An existing changelog topic: enough partitions for its source, and compacted only. */
  private async check(topic: string, source: string, partitions: number): Promise<void> {
    const admin = this.adminClient();
    const bootstrap = this.brokers[0];
    let count: number;
    let policy: string | null | undefined;
    try {
      count = (await admin.metadata({ topics: [topic], forceUpdate: true, autocreateTopics: false })).topics.get(topic)?.partitionsCount ?? 0;
      // an answer without the topic: undefined
      const described = (
        await admin.describeConfigs({
          resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configurationKeys: ['cleanup.policy'] }],
        })
      ).at(0);
      policy = described?.configs.find((c) => c.name === 'cleanup.policy')?.value;
    } catch (err) {
      throw new Error(`changelog topic ${topic}: cannot read its partitions and cleanup.policy: ${rootMessage(err)}`);
    }
    if (count < partitions) {
      throw new Error(
        `changelog topic ${topic} has ${count} partitions, fewer than the ${partitions} of its source topic ${source} (partition p holds the state of source partition p): ` +
          `add partitions with kafka-topics.sh --bootstrap-server ${bootstrap} --alter --topic ${topic} --partitions ${partitions}`,
      );
    }
    // 'compact,delete' would delete the entries older than retention.ms, and the state with them
    const policies = (policy ?? '').split(',').map((p) => p.trim());
    if (!policies.includes('compact') || policies.includes('delete')) {
      throw new Error(
        `changelog topic ${topic} has cleanup.policy=${policy ?? '(none)'}; a changelog must be compact only, or old state is deleted: ` +
          `kafka-configs.sh --bootstrap-server ${bootstrap} --alter --entity-type topics --entity-name ${topic} --add-config cleanup.policy=compact`,
      );
    }
  }

  private adminClient(): Admin {
    // no topic is created by asking for its metadata: a changelog created so would have the broker's defaults, not compact
    this.admin ??= new AdminClass({ ...baseOptions(this.settings, this.brokers, this.clientId), autocreateTopics: false });
    return this.admin;
  }

  private consumerClient(): Consumer {
    this.consumer ??= new ConsumerClass<Buffer, Buffer, Buffer, Buffer>({
      ...baseOptions(this.settings, this.brokers, this.clientId),
      autocreateTopics: false,
      // the constructor wants a group; fetch() never joins it
      groupId: `${this.clientId}-changelog-restore`,
      isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    });
    return this.consumer;
  }
}
