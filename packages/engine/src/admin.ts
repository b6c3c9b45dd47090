// Topic setup and clean-up, and what the cluster says about itself. Safety on shared clusters: a run
// creates only topics whose names it found free, deletes afterwards only what it created, and never
// alters a topic it did not create.

import { setTimeout as delay } from 'node:timers/promises';
import type { ClusterDescription, Scenario } from '@kbench/schema';
import type { Admin, ConfigResourceTypes } from 'kafkajs';
import { fetchApiVersions, inferVersion, rangesByName } from './api-versions.js';
import { createKafka, type Log } from './drivers/kafkajs/client.js';
import type { ConnectionSecurity } from './security.js';

const TOPICS_PER_REQUEST = 1000;
/** Topics one admin probes in waitUntilServed, and how many admins probe at once. */
const TOPICS_PER_PROBE = 50;
const PROBES_AT_ONCE = 4;
/** ConfigResourceTypes.TOPIC (a value, which Node cannot import by name from kafkajs, a CommonJS module). */
const TOPIC_RESOURCE = 2 as ConfigResourceTypes;

/** Where a target is and how to reach it. */
export interface Connection {
  bootstrap: string[];
  security?: ConnectionSecurity;
}

export class TopicExistsError extends Error {
  override name = 'TopicExistsError';
}

async function withAdmin<T>(
  connection: Connection,
  clientId: string,
  log: Log,
  use: (admin: Admin) => Promise<T>,
): Promise<T> {
  const admin = createKafka(clientId, connection.bootstrap, log, connection.security).admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

/** The broker id leading a partition as the cluster's metadata says, or null while none does. */
export async function partitionLeader(
  connection: Connection,
  topic: string,
  partition: number,
  log: Log,
): Promise<number | null> {
  return withAdmin(connection, 'kbench-faults', log, async (admin) => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    const leader = topics[0]?.partitions.find((p) => p.partitionId === partition)?.leader;
    return leader === undefined || leader < 0 ? null : leader;
  });
}

/** A partition as the cluster's metadata describes it. */
export interface PartitionState {
  topic: string;
  partition: number;
  /** null while the partition has none. */
  leader: number | null;
  /** The replica list, the preferred replica first. */
  replicas: number[];
  isr: number[];
}

/**
 * The leader, replicas and ISR of every partition of some topics (of every topic, internal ones
 * included, when `topics` is empty) in one metadata request.
 */
export async function partitionLeaders(
  connection: Connection,
  topics: string[],
  log: Log,
): Promise<PartitionState[]> {
  return withAdmin(connection, 'kbench-faults', log, async (admin) => {
    const metadata = await admin.fetchTopicMetadata({ topics });
    return metadata.topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partitionId,
        leader: p.leader === undefined || p.leader < 0 ? null : p.leader,
        replicas: p.replicas,
        isr: p.isr,
      })),
    );
  });
}

/**
 * Creates the run's topics (whatever the load driver) and waits for their leaders. `created`
 * receives each name as soon as its creation is confirmed, so a failure half-way still leaves a
 * complete list for the clean-up. A name that exists already fails the run before anything is
 * created, unless `topics.ifExists` is reuse: then the topic is used as it is.
 */
export async function createTopics(
  connection: Connection,
  clientId: string,
  topics: string[],
  config: Scenario['topics'],
  log: Log,
  created: string[] = [],
): Promise<{ reused: string[] }> {
  return withAdmin(connection, clientId, log, async (admin) => {
    const before = new Set(await admin.listTopics());
    const existing = topics.filter((t) => before.has(t));
    if (existing.length > 0 && config.ifExists !== 'reuse') {
      const more = existing.length > 1 ? ` (and ${existing.length - 1} more)` : '';
      throw new TopicExistsError(
        `topic ${existing[0]}${more} exists already on the target; kbench never reuses or alters a topic it did not create. Choose another topics.prefix, or set topics.ifExists: reuse to use it as it is`,
      );
    }
    if (existing.length > 0) log('warn', `reusing ${existing.length} existing topic(s) as they are`);
    const missing = topics.filter((t) => !before.has(t));
    const configEntries = Object.entries({
      'min.insync.replicas': String(config.minInsyncReplicas),
      ...config.config,
    }).map(([name, value]) => ({ name, value }));
    // Many topics (the topic-count benchmark makes 120,001) go in requests of a thousand.
    for (let i = 0; i < missing.length; i += TOPICS_PER_REQUEST) {
      const batch = missing.slice(i, i + TOPICS_PER_REQUEST);
      let made: boolean;
      try {
        made = await admin.createTopics({
          // kafkajs's own wait gives up at the first UNKNOWN_TOPIC_OR_PARTITION: waitForLeaders below.
          waitForLeaders: false,
          timeout: 60_000,
          topics: batch.map((topic) => ({
            topic,
            numPartitions: config.partitions,
            replicationFactor: config.replicationFactor,
            configEntries,
          })),
        });
      } catch (err) {
        // Some of the batch may exist now: those are ours (their names were free a moment ago).
        const now = new Set(await admin.listTopics().catch(() => [] as string[]));
        created.push(...batch.filter((t) => now.has(t)));
        throw err;
      }
      if (!made) {
        // Every name of the batch existed when the cluster handled the request: created by someone
        // else since we looked (or by an earlier attempt of this very request). Not ours to delete.
        throw new TopicExistsError(
          `topics ${batch[0]}... appeared on the target while kbench was creating them; not touching them`,
        );
      }
      created.push(...batch);
      await waitForLeaders(admin, batch);
    }
    return { reused: existing };
  });
}

/** How long the partitions of newly created topics may take to get leaders. */
const LEADERS_TIMEOUT_MS = 60_000;

/**
 * Waits until the cluster's metadata names a leader for every partition of `topics`, just created.
 * A broker answers UNKNOWN_TOPIC_OR_PARTITION for a topic the controller has created until it has
 * learned of it, which takes longer on a busy cluster (one deleting hundreds of topics, say), and
 * kafkajs's own wait stops at that answer; here every retriable answer is waited out.
 */
async function waitForLeaders(admin: Admin, topics: string[]): Promise<void> {
  const deadline = Date.now() + LEADERS_TIMEOUT_MS;
  for (let attempt = 1; ; attempt++) {
    let why: string;
    try {
      const described = (await admin.fetchTopicMetadata({ topics })).topics;
      const leaderless = described.find(
        (t) => t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0),
      );
      if (described.length >= topics.length && leaderless === undefined) return;
      why = leaderless
        ? `topic ${leaderless.name} has a partition without a leader`
        : 'not every topic is known yet';
    } catch (err) {
      if ((err as { retriable?: unknown }).retriable !== true) throw err;
      why = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `topics ${topics[0]}${topics.length > 1 ? ` (and ${topics.length - 1} more)` : ''} were created, but had no leaders within ${LEADERS_TIMEOUT_MS / 1000} s: ${why}`,
      );
    }
    await delay(Math.min(1_000, 50 * attempt));
  }
}

/**
 * Waits until every partition of `topics` is served by its leader (a ListOffsets for it answers).
 * A cluster's metadata can name a leader before that broker hosts the partition: an Apache Kafka
 * broker publishes a new metadata image before its replica manager has applied it. A producer that
 * starts in that window gets UNKNOWN_TOPIC_OR_PARTITION, and once, on a loaded machine, the window
 * outlasted the client's retries and failed the run before it measured anything.
 */
export async function waitUntilServed(
  connection: Connection,
  clientId: string,
  topics: string[],
  log: Log,
  timeoutMs = 60_000,
): Promise<void> {
  // kafkajs asks one topic's offsets at a time, and each topic new to an admin makes it fetch the
  // metadata of every topic it has seen: one admin for 1,500 topics took 21-26 s against Apache
  // Kafka. So each admin probes a slice of the topics, and a few of them work side by side.
  const slices: string[][] = [];
  for (let i = 0; i < topics.length; i += TOPICS_PER_PROBE) {
    slices.push(topics.slice(i, i + TOPICS_PER_PROBE));
  }
  const deadline = Date.now() + timeoutMs;
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < slices.length) {
      const slice = slices[next++] as string[];
      await withAdmin(connection, clientId, log, async (admin) => {
        for (const topic of slice) {
          if (failed) return;
          await waitForTopic(admin, topic, deadline, timeoutMs);
        }
      }).catch((err: unknown) => {
        failed = true;
        throw err;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBES_AT_ONCE, slices.length) }, worker));
}

/** Asks for `topic`'s offsets until its leaders answer, or throws once `deadline` has passed. */
async function waitForTopic(admin: Admin, topic: string, deadline: number, timeoutMs: number): Promise<void> {
  for (;;) {
    try {
      await admin.fetchTopicOffsets(topic);
      return;
    } catch (err) {
      if (Date.now() >= deadline) {
        throw new Error(
          `topic ${topic} was created, but its leaders did not serve it within ${timeoutMs / 1000} s: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      await delay(200);
    }
  }
}

/** Deletes the topics and consumer groups a run created; problems are logged, never thrown. */
export async function deleteRunResources(
  connection: Connection,
  clientId: string,
  resources: { topics: string[]; groups: string[] },
  log: Log,
): Promise<void> {
  if (resources.topics.length === 0 && resources.groups.length === 0) return;
  try {
    await withAdmin(connection, clientId, log, async (admin) => {
      if (resources.groups.length > 0) {
        const existing = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
        const ours = resources.groups.filter((g) => existing.has(g));
        if (ours.length > 0) {
          await admin.deleteGroups(ours).catch((err: unknown) => {
            log(
              'warn',
              `deleting the run's consumer groups: ${err instanceof Error ? err.message : String(err)}`,
            );
          });
        }
      }
      for (let i = 0; i < resources.topics.length; i += TOPICS_PER_REQUEST) {
        await admin.deleteTopics({
          topics: resources.topics.slice(i, i + TOPICS_PER_REQUEST),
          timeout: 60_000,
        });
      }
    });
    log('info', `deleted the run's ${resources.topics.length} topic(s)`);
  } catch (err) {
    log(
      'warn',
      `could not delete the run's topics (${resources.topics.slice(0, 3).join(', ')}${resources.topics.length > 3 ? ', ...' : ''}): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The cluster as it describes itself: brokers (DescribeCluster), ApiVersions, the first topic's configs. */
export async function describeTarget(
  connection: Connection,
  clientId: string,
  topic: string | undefined,
  log: Log,
): Promise<ClusterDescription> {
  return withAdmin(connection, clientId, log, async (admin) => {
    const cluster = await admin.describeCluster();
    let topicConfigs: ClusterDescription['topicConfigs'] = null;
    if (topic !== undefined) {
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: TOPIC_RESOURCE, name: topic }],
      });
      const entries = described.resources[0]?.configEntries ?? [];
      topicConfigs = {
        topic,
        configs: Object.fromEntries(
          [...entries]
            .sort((a, b) => a.configName.localeCompare(b.configName))
            .map((e) => [e.configName, e.isSensitive ? null : e.configValue]),
        ),
      };
    }
    let apiVersions: Record<string, string> = {};
    let versionHint = 'unknown (ApiVersions did not answer)';
    for (const server of connection.bootstrap) {
      const colon = server.lastIndexOf(':');
      try {
        const ranges = await fetchApiVersions(
          server.slice(0, colon),
          Number(server.slice(colon + 1)),
          connection.security?.tls,
        );
        apiVersions = rangesByName(ranges);
        versionHint = inferVersion(ranges);
        break;
      } catch (err) {
        log('warn', `ApiVersions from ${server}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return {
      clusterId: cluster.clusterId ?? null,
      controllerId: cluster.controller ?? null,
      brokers: cluster.brokers
        .map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port }))
        .sort((a, b) => a.nodeId - b.nodeId),
      apiVersions,
      versionHint,
      topicConfigs,
    };
  });
}
