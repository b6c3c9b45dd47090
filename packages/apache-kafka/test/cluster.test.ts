import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApacheKafka,
  consumerPerformance,
  metadataBrokerIds,
  producerPerformance,
  runKafkaTool,
  startApacheKafka,
} from '../src/index.js';

// Three KRaft nodes (each broker and controller, a quorum of all three) in three JVMs on loopback,
// and a topic replicated three times that takes acks=all writes and gives them back.
describe('a three-node Apache Kafka cluster', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbench-apache-kafka-3-'));
  let kafka: ApacheKafka;

  beforeAll(async () => {
    // Half the default heap each: three JVMs on one small machine.
    kafka = await startApacheKafka({
      dataDir,
      nodes: 3,
      jvmArgs: ['-Xmx512m', '-Xms512m', '-XX:+UseG1GC', '-Djava.awt.headless=true'],
    });
  });

  afterAll(async () => {
    await kafka?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts three nodes, each with its own ports and data dir, all listed as brokers', async () => {
    expect(kafka.nodes.map((n) => n.id)).toEqual([1, 2, 3]);
    const ports = kafka.nodes.flatMap((n) => [n.port, n.controllerPort]);
    expect(new Set(ports).size).toBe(6);
    expect(new Set(kafka.nodes.map((n) => n.dataDir)).size).toBe(3);
    expect(kafka.bootstrap.split(',')).toHaveLength(3);
    expect(await metadataBrokerIds('127.0.0.1', kafka.nodes[2]?.port ?? 0)).toEqual([1, 2, 3]);
  });

  it('replicates a topic three times and serves acks=all writes and reads of it', async () => {
    const created = await runKafkaTool('org.apache.kafka.tools.TopicCommand', [
      '--bootstrap-server',
      kafka.bootstrap,
      '--create',
      '--topic',
      'rf3',
      '--partitions',
      '3',
      '--replication-factor',
      '3',
      '--config',
      'min.insync.replicas=2',
    ]);
    expect(created.stdout).toContain('Created topic rf3.');
    const produced = await producerPerformance({
      bootstrap: kafka.bootstrap,
      topic: 'rf3',
      records: 20_000,
      recordSize: 100,
      producerProps: { acks: 'all' },
    });
    expect(produced.records).toBe(20_000);
    const consumed = await consumerPerformance({
      bootstrap: kafka.bootstrap,
      topic: 'rf3',
      messages: 20_000,
    });
    expect(consumed.messages).toBe(20_000);
    const described = await runKafkaTool('org.apache.kafka.tools.TopicCommand', [
      '--bootstrap-server',
      kafka.bootstrap,
      '--describe',
      '--topic',
      'rf3',
    ]);
    expect(described.stdout).toContain('ReplicationFactor: 3');
    // Every partition has all three replicas in sync after the writes.
    const isr = [...described.stdout.matchAll(/Isr: ([\d,]+)/g)].map((m) => m[1]?.split(',').length);
    expect(isr).toEqual([3, 3, 3]);
  });

  it('a restart of a node its earlier restart is still starting waits for that start: both succeed', async () => {
    // Without the wait the second kills the JVM the first is starting, and the first fails with
    // "exited during startup (SIGKILL)", as a rolling restart once did to a restarted leader in CI.
    const first = kafka.restart(3);
    const second = kafka.restart(3);
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
    expect(kafka.running(3)).toBe(true);
    const node = kafka.nodes[2];
    expect(node?.id).toBe(3);
    expect(await metadataBrokerIds('127.0.0.1', node?.port ?? 0)).not.toBeNull();
  });

  it('a kill of a node a restart is still starting waits for that start, then kills what it started', async () => {
    // Without the wait the kill finds the old JVM (being killed by the restart) and the restarted
    // node comes up after the fault timeline recorded it killed.
    const restart = kafka.restart(3);
    const kill = kafka.kill(3);
    await expect(Promise.all([restart, kill])).resolves.toEqual([undefined, undefined]);
    expect(kafka.running(3)).toBe(false);
    expect(() => process.kill(kafka.nodes[2]?.pid ?? 0, 0)).toThrow(/ESRCH/);
  });

  it('stop() during a restart waits for it, then ends every JVM, the restarted one too', async () => {
    // Node 3 is down (the test above): the restart starts a JVM that stop() must not leave behind.
    // Without the wait, stop() ends the quorum under the starting node, and its restart fails.
    const restart = kafka.restart(3);
    const stopped = kafka.stop();
    await expect(restart).resolves.toBeUndefined();
    await stopped;
    for (const node of kafka.nodes) expect(() => process.kill(node.pid, 0)).toThrow(/ESRCH/);
  });
});
