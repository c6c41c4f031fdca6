/**
 * What both kafka onramps (at least once: onramp.ts; exactly once:
 * exactly-once.ts) do the same way: reach the brokers and the topics at
 * activation, and the spec's `$kafka` meta of a message.
 */
import type { Consumer, Message } from '@platformatic/kafka';
import { Backoff } from '../_shared/backoff';
import { rootMessage } from './options';

/** The spec's `$kafka`. */
export interface KafkaMeta {
  topic: string;
  partition: number;
  offset: number;
  /** ms since the epoch (the message's CreateTime or LogAppendTime) */
  timestamp: number;
  /** absent when the message has none */
  key?: Buffer;
  /** absent when the message has none */
  headers?: Record<string, Buffer | Buffer[]>;
}

/**
 * Reaches the brokers and learns the topics: what must work for the
 * activation to succeed. A topic the broker creates on first use
 * (auto.create.topics.enable) has no leader for a moment: asked again, a
 * few times. The consumer is closed when it fails.
 */
export async function reachTopics(consumer: Consumer, topics: string[], brokers: string[], closed: () => boolean): Promise<void> {
  try {
    await consumer.listApis();
  } catch (err) {
    await consumer.close().catch(() => undefined);
    throw new Error(`cannot reach the kafka brokers ${brokers.join(', ')}: ${rootMessage(err)}`);
  }
  const backoff = new Backoff(100, 1000);
  const absent = 'the broker does not have them and did not create them';
  for (let attempt = 1; ; attempt++) {
    let why = absent;
    try {
      const metadata = await consumer.metadata({ topics, forceUpdate: true });
      if (topics.every((t) => metadata.topics.get(t)?.partitions.every((p) => p.leader >= 0))) return;
    } catch (err) {
      why = rootMessage(err);
      if (/UNKNOWN_TOPIC_OR_PARTITION|LEADER_NOT_AVAILABLE/.test(why)) why = absent;
    }
    if (why !== absent || attempt >= 8 || closed()) {
      await consumer.close().catch(() => undefined);
      throw new Error(`cannot subscribe to the kafka topics ${topics.join(', ')}: ${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, backoff.next()));
  }
}

/** `$kafka`: offset and timestamp as numbers (the client's are bigints); key and headers only when the message has them. */
export function kafkaMeta(m: Message, offset: number): KafkaMeta {
  const meta: KafkaMeta = { topic: m.topic, partition: m.partition, offset, timestamp: Number(m.timestamp) };
  // a message without a key has none (null on the wire, undefined after a failed deserialisation), whatever the client's type says
  const messageKey = m.key as Buffer | null | undefined;
  if (messageKey !== undefined && messageKey !== null) meta.key = messageKey;
  const entries = m.headerEntries;
  if (entries.length > 0) {
    const headers: Record<string, Buffer | Buffer[]> = {};
    for (const [name, value] of entries) {
      const key = name.toString('utf8');
      const had = headers[key] as Buffer | Buffer[] | undefined;
      // a repeated header: a list, in the message's order (kafkajs's shape)
      headers[key] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
    }
    meta.headers = headers;
  }
  return meta;
}
