/**
 * Creating a topic for a test, and waiting until it can be used: only
 * kafkajs, so the compliance harness (which imports no connector module)
 * shares it with the kafka tests' peer.
 */
import type { Admin, ITopicConfig } from 'kafkajs';

/**
 * Creates `topic` and waits, within `ms`, until the leader of every partition
 * serves it. kafkajs's own wait (createTopics' `waitForLeaders`) gives up at
 * once with "This server does not host this topic-partition" when the
 * broker's metadata does not know the new topic yet (KRaft publishes it a
 * moment after the controller created it), and a partition whose leader the
 * metadata names may still be refused by that leader for a moment; under
 * load both moments grow. So: fresh metadata until every partition has a
 * leader, then the partitions' offsets (ListOffsets, which only a leader that
 * hosts the partition answers) until every one answers.
 */
export async function createServedTopic(admin: Admin, topic: ITopicConfig, ms = 60_000): Promise<void> {
  await admin.createTopics({ topics: [topic] });
  const partitions = topic.numPartitions ?? 1;
  const deadline = Date.now() + ms;
  let last = 'no answer';
  for (;;) {
    try {
      const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic.topic] })).topics;
      const led = metadata.partitions.filter((p) => p.partitionErrorCode === 0 && p.leader >= 0).length;
      last = `${led} of ${partitions} partitions have a leader`;
      if (led === partitions) {
        const served = (await admin.fetchTopicOffsets(topic.topic)).length;
        last = `the leaders serve ${served} of ${partitions} partitions`;
        if (served === partitions) return;
      }
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() >= deadline) throw new Error(`topic ${topic.topic}: not served after ${ms} ms (last: ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
