import type { Scenario } from '@kbench/schema';
import { createKafka, type Log } from './drivers/kafkajs/client.js';

const TOPICS_PER_REQUEST = 1000;

/** Creates the run's topics (whatever the load driver) and waits for their leaders. */
export async function createTopics(
  bootstrap: string[],
  clientId: string,
  topics: string[],
  config: Scenario['topics'],
  log: Log,
): Promise<void> {
  const admin = createKafka(clientId, bootstrap, log).admin();
  await admin.connect();
  try {
    const configEntries = Object.entries({
      'min.insync.replicas': String(config.minInsyncReplicas),
      ...config.config,
    }).map(([name, value]) => ({ name, value }));
    // Many topics (the topic-count benchmark makes 120,001) go in requests of a thousand.
    for (let i = 0; i < topics.length; i += TOPICS_PER_REQUEST) {
      await admin.createTopics({
        waitForLeaders: true,
        timeout: 60_000,
        topics: topics.slice(i, i + TOPICS_PER_REQUEST).map((topic) => ({
          topic,
          numPartitions: config.partitions,
          replicationFactor: config.replicationFactor,
          configEntries,
        })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}
