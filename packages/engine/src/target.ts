import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrokerHandle, startBroker } from '@kbench/broker-native';
import { type Scenario, ScenarioError, type TargetProfile, targetKind } from '@kbench/schema';
import { ProfileStore } from './profiles.js';
import { type ConnectionSecurity, connectionSecurity } from './security.js';

/** Where load goes: a bundled broker this run owns, or an external cluster it only uses. */
export interface Target {
  kind: 'bundled' | 'kafka' | 'external';
  bootstrap: string[];
  /** TLS and SASL settings of a profile (secrets: for clients only). */
  security?: ConnectionSecurity;
  /** The profile the target came from, if any. */
  profile?: TargetProfile;
  /** Stops what this run started and removes its data; external targets are left untouched. */
  close(): Promise<void>;
}

export interface OpenTargetOptions {
  workDir?: string;
  profiles?: ProfileStore;
}

/** The profile a scenario's target names, or undefined for bundled, kafka and bootstrap servers. */
export function targetProfile(target: string, profiles: ProfileStore): TargetProfile | undefined {
  if (targetKind(target) !== 'profile') return undefined;
  const profile = profiles.get(target);
  if (!profile) {
    throw new ScenarioError([
      {
        path: 'target',
        message: `no profile named ${JSON.stringify(target)} in ${profiles.dir} (see kbench profile list); a target is bundled, kafka, a profile name or bootstrap servers host:port[,host:port]`,
      },
    ]);
  }
  return profile;
}

export async function openTarget(scenario: Scenario, options: OpenTargetOptions = {}): Promise<Target> {
  const { workDir } = options;
  const kind = targetKind(scenario.target);
  if (kind === 'kafka') return openManagedKafka(scenario.cluster.nodes, workDir);
  if (kind === 'bootstrap') {
    return { kind: 'external', bootstrap: scenario.target.split(','), close: async () => {} };
  }
  if (kind === 'profile') {
    const profile = targetProfile(scenario.target, options.profiles ?? new ProfileStore()) as TargetProfile;
    const security = connectionSecurity(profile);
    return {
      kind: 'external',
      bootstrap: profile.bootstrap.split(','),
      profile,
      ...(security ? { security } : {}),
      close: async () => {},
    };
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
 * A real Apache Kafka cluster (1..N KRaft nodes on loopback) from the official jars on Maven Central,
 * fetched with Maven on first use and cached; started for this run and stopped after it.
 */
async function openManagedKafka(nodes: number, workDir?: string): Promise<Target> {
  // Loaded on use: most runs never need Java.
  const { ensureKafkaJars, startApacheKafka } = await import('@kbench/apache-kafka');
  await ensureKafkaJars();
  const dataDir = await mkdtemp(path.join(workDir ?? os.tmpdir(), 'kbench-kafka-'));
  try {
    const kafka = await startApacheKafka({ dataDir, nodes });
    return {
      kind: 'kafka',
      bootstrap: kafka.bootstrap.split(','),
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
