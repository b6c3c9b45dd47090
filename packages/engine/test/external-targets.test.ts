// External targets for real: an Apache Kafka 4.3.1 node with a SASL_PLAINTEXT listener (SCRAM
// credentials written at format time with kafka-storage format --add-scram, PLAIN users in its
// config), reached through named profiles as a shared cluster would be. Runs go to a real DuckDB
// history; the checks are what a user of a shared cluster relies on: the password goes nowhere, the
// run cleans up what it created and touches nothing else, and the rate ceiling holds.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ApacheKafka, startApacheKafka } from '@kbench/apache-kafka';
import { History, runsToCsv, samplesToCsv } from '@kbench/history';
import { parseScenario, type RunRecord, ScenarioError, type ScenarioInput } from '@kbench/schema';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntilServed } from '../src/admin.js';
import { ProfileStore, ScenarioRun, startRecordedRun } from '../src/index.js';

const PASSWORD = 'Sup3r-secret-pw-7f3a';
const USER = 'bench';

let workDir: string;
let kafka: ApacheKafka;
let history: History;
let profiles: ProfileStore;
let admin: Admin;
const logs: string[] = [];

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-external-'));
  kafka = await startApacheKafka({
    dataDir: path.join(workDir, 'kafka'),
    sasl: {
      mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512', 'PLAIN'],
      users: [{ username: USER, password: PASSWORD }],
    },
  });
  history = await History.open(path.join(workDir, 'history.duckdb'));
  profiles = new ProfileStore(path.join(workDir, 'profiles'));
  const sasl = (mechanism: string, password = PASSWORD) => ({ mechanism, username: USER, password });
  profiles.save({ name: 'scram', bootstrap: kafka.saslBootstrap, sasl: sasl('scram-sha-256') });
  profiles.save({ name: 'scram512', bootstrap: kafka.saslBootstrap, sasl: sasl('scram-sha-512') });
  profiles.save({ name: 'plain', bootstrap: kafka.saslBootstrap, sasl: sasl('plain') });
  profiles.save({ name: 'wrong', bootstrap: kafka.saslBootstrap, sasl: sasl('scram-sha-256', 'not-it') });
  profiles.save({
    name: 'capped',
    bootstrap: kafka.saslBootstrap,
    sasl: sasl('scram-sha-256'),
    maxRate: 400,
  });
  // The test's own view of the cluster, on the PLAINTEXT listener.
  admin = new Kafka({
    clientId: 'test-admin',
    brokers: [kafka.bootstrap],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
}, 600_000);

afterAll(async () => {
  await admin?.disconnect();
  await kafka?.stop();
  await rm(workDir, { recursive: true, force: true });
});

function scenario(extra: ScenarioInput) {
  return parseScenario({
    name: 'external',
    target: 'scram',
    driver: 'kafkajs',
    records: 3000,
    topics: { partitions: 2 },
    producers: { count: 1, messageSize: 200 },
    consumers: { count: 1 },
    ...extra,
  });
}

async function record(extra: ScenarioInput, maxRate?: number): Promise<RunRecord> {
  const live = await startRecordedRun(scenario(extra), {
    history,
    workDir,
    profiles,
    ...(maxRate ? { maxRate } : {}),
  });
  live.on('log', ({ message }: { message: string }) => logs.push(message));
  return live.done;
}

async function topicsOfRun(id: string): Promise<string[]> {
  return (await admin.listTopics()).filter((t) => t.includes(id));
}

describe('a SCRAM-SHA-256 profile against Apache Kafka', () => {
  let run: RunRecord;

  beforeAll(async () => {
    run = await record({});
  }, 300_000);

  it('runs a kafkajs scenario through the SASL listener and stores it', async () => {
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(3000);
    // Bounded by records, the run ends when the producers are done; the consumer reads along.
    expect(run.summary?.consumed.records).toBeGreaterThan(0);
    expect(run.environment).toMatchObject({
      target: 'external',
      profile: 'scram',
      security: 'SASL_PLAINTEXT scram-sha-256',
      bootstrap: kafka.saslBootstrap,
    });
  });

  it('records the cluster as it describes itself: brokers, ApiVersions, the topic configs', () => {
    const cluster = run.environment.cluster;
    expect(cluster?.brokers).toEqual([{ nodeId: 1, host: '127.0.0.1', port: kafka.nodes[0]?.saslPort }]);
    expect(cluster?.controllerId).toBe(1);
    expect(cluster?.apiVersions.Fetch).toBe('4-18');
    expect(cluster?.apiVersions.Produce).toMatch(/^\d+-13$/);
    expect(cluster?.apiVersions.SaslAuthenticate).toBeDefined();
    expect(cluster?.versionHint).toMatch(
      /^serves the Kafka protocol of Apache Kafka 4\.0 or later \(Produce v\d+-13, Fetch v4-18\)/,
    );
    expect(run.environment.versions.broker).toBe(cluster?.versionHint);
    expect(cluster?.topicConfigs?.topic).toBe(`kbench-${run.id}-0`);
    expect(cluster?.topicConfigs?.configs['min.insync.replicas']).toBe('1');
    expect(cluster?.topicConfigs?.configs['cleanup.policy']).toBe('delete');
  });

  it('deletes the topics and the consumer group it created', async () => {
    expect(await topicsOfRun(run.id)).toEqual([]);
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
    expect(groups.filter((g) => g.includes(run.id))).toEqual([]);
  });

  it('writes the password nowhere: history rows, JSON, CSV, the DuckDB file, logs', async () => {
    const stored = await history.getRun(run.id);
    const everything = [
      JSON.stringify(stored),
      JSON.stringify(await history.listRuns({})),
      JSON.stringify(await history.getSamples(run.id)),
      runsToCsv(await history.listRuns({})),
      samplesToCsv(await history.getSamples(run.id)),
      logs.join('\n'),
      JSON.stringify(process.env),
    ].join('\n');
    expect(everything).toContain('scram');
    expect(everything).not.toContain(PASSWORD);
    // The file itself, byte for byte (the history closes it between calls).
    const file = await readFile(history.path);
    expect(file.includes(Buffer.from(PASSWORD))).toBe(false);
    expect(file.includes(Buffer.from('profile'))).toBe(true);
  });
});

describe('other SASL mechanisms and a wrong password', () => {
  it('SCRAM-SHA-512 and PLAIN profiles run too', async () => {
    for (const target of ['scram512', 'plain']) {
      const run = await record({ target, records: 1000, consumers: { count: 0 } });
      expect(run.status, `${target}: ${run.error}`).toBe('completed');
      expect(run.environment.security).toBe(
        `SASL_PLAINTEXT ${target === 'plain' ? 'plain' : 'scram-sha-512'}`,
      );
    }
  }, 300_000);

  it('a wrong password fails the run with an authentication error that does not quote it', async () => {
    const run = await record({ target: 'wrong', records: 100, consumers: { count: 0 } });
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/SASL|authentication/i);
    expect(run.error).not.toContain('not-it');
    expect(run.error).toMatch(/hint: check sasl\.username, sasl\.password and sasl\.mechanism/);
  }, 120_000);
});

describe('before the load starts', () => {
  it('waits until a topic is served, and gives up on one never served, naming it and the time', async () => {
    const connection = { bootstrap: [kafka.bootstrap] };
    const quiet = () => {};
    await admin.createTopics({ topics: [{ topic: 'served-soon', numPartitions: 3 }] });
    await expect(waitUntilServed(connection, 'wait-test', ['served-soon'], quiet)).resolves.toBeUndefined();
    const offsets = await admin.fetchTopicOffsets('served-soon');
    expect(offsets).toHaveLength(3);
    await expect(waitUntilServed(connection, 'wait-test', ['never-created'], quiet, 1_000)).rejects.toThrow(
      /topic never-created was created, but its leaders did not serve it within 1 s/,
    );
    expect(await admin.listTopics()).not.toContain('never-created');
    await admin.deleteTopics({ topics: ['served-soon'] });
  });

  it('waits for hundreds of topics, probing them in slices, names one never served in a late slice, and creates topics while they are deleted', async () => {
    const connection = { bootstrap: [kafka.bootstrap] };
    const quiet = () => {};
    // 230 topics: 5 slices of at most 50, 4 probed side by side.
    const topics = Array.from({ length: 230 }, (_, i) => `served-many-${i}`);
    await admin.createTopics({
      waitForLeaders: false,
      topics: topics.map((topic) => ({ topic, numPartitions: 2 })),
    });
    await expect(waitUntilServed(connection, 'wait-test', topics, quiet)).resolves.toBeUndefined();
    // A client of its own asks, so the test's admin never refreshes these topics once deleted.
    const probe = new Kafka({
      clientId: 'probe',
      brokers: [kafka.bootstrap],
      logLevel: logLevel.NOTHING,
    }).admin();
    await probe.connect();
    try {
      for (const topic of [topics[0], topics[49], topics[50], topics[229]] as string[]) {
        expect(await probe.fetchTopicOffsets(topic)).toHaveLength(2);
      }
    } finally {
      await probe.disconnect();
    }
    const withMissing = [...topics.slice(0, 160), 'never-created-late', ...topics.slice(160)];
    await expect(waitUntilServed(connection, 'wait-test', withMissing, quiet, 1_000)).rejects.toThrow(
      /topic never-created-late was created, but its leaders did not serve it within 1 s/,
    );
    await admin.deleteTopics({ topics });
    // While the cluster deletes them, a run's new topics are unknown to its broker for a while after
    // the controller created them: kafkajs's own wait for their leaders failed the run right there
    // (UNKNOWN_TOPIC_OR_PARTITION); the run waits it out.
    const run = await record({ records: 200, consumers: { count: 0 } });
    expect(run.status, String(run.error)).toBe('completed');
  }, 120_000);
});

describe('safety on a shared cluster', () => {
  it('keeps its topics when asked', async () => {
    const run = await record({ records: 500, consumers: { count: 0 }, topics: { keep: true, count: 2 } });
    expect(run.status, String(run.error)).toBe('completed');
    expect((await topicsOfRun(run.id)).sort()).toEqual([`kbench-${run.id}-0`, `kbench-${run.id}-1`]);
    await admin.deleteTopics({ topics: await topicsOfRun(run.id) });
  });

  it('a topic of the planned name that exists already fails the run, untouched; reuse leaves it be', async () => {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: 'theirs-fixed-0',
          numPartitions: 1,
          configEntries: [{ name: 'retention.ms', value: '12345678' }],
        },
      ],
    });
    const describeTopic = async () =>
      (
        await admin.describeConfigs({
          includeSynonyms: false,
          resources: [
            { type: 2, name: 'theirs-fixed-0', configNames: ['retention.ms', 'min.insync.replicas'] },
          ],
        })
      ).resources[0]?.configEntries.map((e) => [e.configName, e.configValue]);
    const before = await describeTopic();

    const clash = scenario({
      records: 200,
      consumers: { count: 0 },
      topics: { prefix: 'theirs', count: 2, minInsyncReplicas: 1, config: { 'retention.ms': 1000 } },
    });
    const failed = await new ScenarioRun(clash, { runId: 'fixed', profiles, workDir }).execute();
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('topic theirs-fixed-0 exists already on the target');
    expect(failed.error).toContain('topics.ifExists: reuse');
    // Nothing created (not even the free name theirs-fixed-1), nothing deleted or altered.
    expect((await admin.listTopics()).filter((t) => t.startsWith('theirs-'))).toEqual(['theirs-fixed-0']);
    expect(await describeTopic()).toEqual(before);

    const reuse = parseScenario({ ...clash, topics: { ...clash.topics, ifExists: 'reuse' } });
    const reused = await new ScenarioRun(reuse, { runId: 'fixed', profiles, workDir }).execute();
    expect(reused.status, String(reused.error)).toBe('completed');
    // Ours (theirs-fixed-1) was deleted; theirs is still there, as it was.
    expect((await admin.listTopics()).filter((t) => t.startsWith('theirs-'))).toEqual(['theirs-fixed-0']);
    expect(await describeTopic()).toEqual(before);
    const offsets = await admin.fetchTopicOffsets('theirs-fixed-0');
    expect(Number(offsets[0]?.high)).toBeGreaterThan(0);
  }, 300_000);

  it('caps rate max at the profile ceiling and refuses a fixed rate above it', async () => {
    const run = await record({
      target: 'capped',
      records: undefined,
      duration: '4s',
      consumers: { count: 0 },
    });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.environment.rateCeiling).toBe(400);
    expect(run.summary?.produced.recordsPerSec).toBeGreaterThan(300);
    expect(run.summary?.produced.recordsPerSec).toBeLessThan(480);
    await expect(record({ target: 'capped', producers: { rate: 1000 } })).rejects.toThrow(ScenarioError);
    await expect(record({ target: 'scram', producers: { rate: 1000 } }, 500)).rejects.toThrow(
      /producers\.rate: 1000 records\/s is above the rate ceiling of 500 records\/s \(--max-rate\)/,
    );
  }, 120_000);
});
