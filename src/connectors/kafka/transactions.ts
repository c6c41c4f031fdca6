/**
 * The transactional producer of a kafka onramp with `guarantee:
 * exactly_once` (docs/design-exactly-once.md): one transaction per commit
 * interval, holding the flow's output records, its changelog records and
 * the consumed offsets, committed as one.
 *
 * The client's traps, each worked around here (the design doc's table):
 * InitProducerId must say "a new producer" (producerId -1, epoch -1) or a
 * restart is fenced; concurrent sends or offset adds in one transaction are
 * merged by the client, so there is exactly one send and the offsets are
 * added one at a time; commit does not wait for sends, so everything is
 * awaited first and any error aborts; a fenced producer cannot recover, so
 * it is replaced; an empty transaction cannot be committed, so none is
 * begun without records or offsets.
 */
import { upwardJitter } from '../../core/jitter';
import { randomUUID } from 'node:crypto';
import type { Consumer, MessageToProduce, Producer } from '@platformatic/kafka';
import type { Logger } from '../../core/logger';
import { javaPartitioner, platformatic, producerOptions, rootMessage, type KafkaSettings } from './options';

const { Producer: ProducerClass, findErrorBy } = platformatic('the kafka onramp (guarantee: exactly_once)');

export type Record_ = MessageToProduce;

/** A consumed offset to commit: the last message handed over of a partition, with the group generation it was fetched in. */
export interface ConsumedOffset {
  readonly topic: string;
  readonly partition: number;
  /** the last offset handed over (the transaction commits the one after it) */
  offset: bigint;
  consumer: { groupId: string; generationId: number; memberId: string; coordinatorId: number };
}

/** Client errors after which this producer instance is dead: another one takes its place. */
const FENCED = /PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|There is already an active transaction/;

export class KafkaTransactions {
  private producer: Producer;
  private readonly transactionalId: string;

  constructor(
    private readonly settings: KafkaSettings,
    private readonly brokers: string[],
    private readonly clientId: string,
    group: string,
    /** the transaction timeout: the broker aborts a transaction left open longer (a member killed in the middle of one) */
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly who: string,
  ) {
    // fencing comes from the group generation sent with the offsets (KIP-447), not from a stable id: one id per instance
    this.transactionalId = `eddy-${group}-${randomUUID()}`;
    this.producer = this.newProducer();
  }

  /**
   * One transaction: `records` in one send, then each partition's offset,
   * then the commit. Rejects (the transaction aborted, nothing of it
   * visible to read_committed readers) naming the step that failed.
   */
  async commit(records: readonly Record_[], offsets: readonly ConsumedOffset[], consumer: Consumer): Promise<void> {
    if (records.length === 0 && offsets.length === 0) return;
    let step = 'begin';
    const tx = await this.producer.beginTransaction().catch((err: unknown) => this.failed(err, step));
    try {
      step = 'send';
      if (records.length > 0) await tx.send({ messages: records as Record_[] });
      if (offsets.length > 0) {
        step = 'add the consumer group';
        await tx.addConsumer(consumer);
        for (const o of offsets) {
          step = `commit the offset of ${o.topic}/${o.partition}`;
          // the library commits offset + 1; the generation is the fetch's, so a member that lost the partition since is refused
          await tx.addOffset({ topic: o.topic, partition: o.partition, offset: o.offset, metadata: { consumer: o.consumer } } as never);
        }
      }
      step = 'commit';
      await tx.commit();
    } catch (err) {
      await tx.abort().catch((abortErr: unknown) => this.logger.debug(`${this.who}: abort: ${rootMessage(abortErr)}`));
      return this.failed(err, step);
    }
  }

  async close(): Promise<void> {
    await this.producer.close(true).catch((err: unknown) => this.logger.debug(`${this.who}: closing the producer: ${rootMessage(err)}`));
  }

  /** A failed step: a dead producer is replaced; the error names the step and the broker's reason. */
  private async failed(err: unknown, step: string): Promise<never> {
    const reason = rootMessage(err);
    const fenced = findErrorBy(err as Error, 'apiId', 'PRODUCER_FENCED') ?? findErrorBy(err as Error, 'apiId', 'INVALID_PRODUCER_EPOCH');
    if (fenced || FENCED.test(reason)) {
      this.logger.info(`${this.who}: the transactional producer was fenced (${reason}); a new one takes its place`);
      await this.close();
      this.producer = this.newProducer();
    }
    throw new Error(`the transaction failed (${step}): ${reason}`);
  }

  private newProducer(): Producer {
    const options = producerOptions(this.settings, this.brokers, this.clientId, {
      partitioner: javaPartitioner(),
      transactionalId: this.transactionalId,
    });
    return new ProducerClass({
      ...options,
      // "a new producer": without these the client re-initialises as producer 0, epoch 0, and is fenced itself
      producerId: -1n,
      producerEpoch: -1,
      // the client's timeout is also the transaction timeout the broker enforces
      timeout: this.timeoutMs,
      // an idempotent producer takes retries <= 1 for "forever"
      retries: Math.max(2, typeof options.retries === 'number' ? options.retries : 0),
      // the previous transaction's markers are still being written: ask again soon, not after the default second
      retryDelay: (_client, _operation, attempt, _retries, error) =>
        upwardJitter(findErrorBy(error, 'apiId', 'CONCURRENT_TRANSACTIONS') ? 20 : Math.min(1000, 50 * 2 ** (attempt - 1))),
    });
  }
}
