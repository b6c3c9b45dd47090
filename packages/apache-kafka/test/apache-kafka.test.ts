import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApacheKafka,
  consumerPerformance,
  ensureKafkaJars,
  producerPerformance,
  runKafkaTool,
  startApacheKafka,
} from '../src/index.js';

// The real thing: Maven fetches the jars on first use (then the cache answers), a KRaft broker starts,
// and the official perf tools run against it.
describe('Apache Kafka 4.3.1 from Maven Central', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbench-apache-kafka-'));
  let kafka: ApacheKafka;

  beforeAll(async () => {
    kafka = await startApacheKafka({ dataDir });
  });

  afterAll(async () => {
    await kafka?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ensureKafkaJars returns a classpath holding the 4.3.1 broker, clients and tools', async () => {
    const jars = await ensureKafkaJars();
    expect(jars.version).toBe('4.3.1');
    const files = readdirSync(jars.libDir);
    for (const jar of ['kafka_2.13-4.3.1.jar', 'kafka-clients-4.3.1.jar', 'kafka-tools-4.3.1.jar']) {
      expect(files).toContain(jar);
    }
  });

  it('two concurrent first fetches into one empty cache take turns: both succeed, one fetches', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'kbench-jar-cache-'));
    try {
      const fetched: string[] = [];
      const log = (line: string) => {
        if (line.startsWith('fetched')) fetched.push(line);
      };
      const [a, b] = await Promise.all([
        ensureKafkaJars({ cacheDir, log }),
        ensureKafkaJars({ cacheDir, log }),
      ]);
      expect(a.classpath).toBe(b.classpath);
      expect(fetched).toHaveLength(1);
      expect(readdirSync(a.libDir)).toContain('kafka_2.13-4.3.1.jar');
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it('serves TopicCommand and a ProducerPerformance -> ConsumerPerformance round trip', async () => {
    const created = await runKafkaTool('org.apache.kafka.tools.TopicCommand', [
      '--bootstrap-server',
      kafka.bootstrap,
      '--create',
      '--topic',
      'round-trip',
      '--partitions',
      '3',
    ]);
    expect(created.stdout).toContain('Created topic round-trip.');

    const produced = await producerPerformance({
      bootstrap: kafka.bootstrap,
      topic: 'round-trip',
      records: 100_000,
      recordSize: 100,
      warmupRecords: 10_000,
      producerProps: { acks: 'all' },
    });
    expect(produced.records).toBe(100_000);
    expect(produced.steadyState?.records).toBe(90_000);
    expect(produced.recordsPerSec).toBeGreaterThan(0);
    expect(produced.p999Ms).toBeGreaterThanOrEqual(produced.p50Ms);

    const consumed = await consumerPerformance({
      bootstrap: kafka.bootstrap,
      topic: 'round-trip',
      messages: 100_000,
    });
    expect(consumed.messages).toBe(100_000);
    expect(consumed.mb).toBeCloseTo((100_000 * 100) / 1024 / 1024, 3);
  });

  it('stop() ends the JVM for sure', async () => {
    const other = await startApacheKafka({ dataDir: join(dataDir, 'second') });
    await other.stop();
    expect(() => process.kill(other.pid, 0)).toThrow(/ESRCH/);
  });
});
