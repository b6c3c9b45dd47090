import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrokerHandle, startBroker } from '@kbench/broker-native';
import type { Scenario } from '@kbench/schema';

/** Where load goes: a bundled broker this run owns, or an external cluster it only uses. */
export interface Target {
  kind: 'bundled' | 'kafka' | 'external';
  bootstrap: string[];
  /** Stops what this run started and removes its data; external targets are left untouched. */
  close(): Promise<void>;
}

export async function openTarget(scenario: Scenario, workDir?: string): Promise<Target> {
  if (scenario.target === 'kafka') return openManagedKafka(workDir);
  if (scenario.target !== 'bundled') {
    return { kind: 'external', bootstrap: scenario.target.split(','), close: async () => {} };
  }
  const dataDir = await mkdtemp(path.join(workDir ?? os.tmpdir(), 'kbench-broker-'));
  let broker: BrokerHandle;
  try {
    broker = await startBroker({ dataDir, port: 0 });
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    kind: 'bundled',
    bootstrap: [`${broker.host}:${broker.port}`],
    close: async () => {
      await broker.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A real Apache Kafka broker (single KRaft node on loopback) from the official jars on Maven Central,
 * fetched with Maven on first use and cached; started for this run and stopped after it.
 */
async function openManagedKafka(workDir?: string): Promise<Target> {
  // Loaded on use: most runs never need Java.
  const { ensureKafkaJars, startApacheKafka } = await import('@kbench/apache-kafka');
  await ensureKafkaJars();
  const dataDir = await mkdtemp(path.join(workDir ?? os.tmpdir(), 'kbench-kafka-'));
  try {
    const kafka = await startApacheKafka({ dataDir });
    return {
      kind: 'kafka',
      bootstrap: [kafka.bootstrap],
      close: async () => {
        await kafka.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}
