import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type BrokerHandle,
  type ClusterHandle,
  type ClusterNodeStats,
  startBroker,
  startCluster,
} from '@kbench/broker-native';
import {
  didYouMean,
  type PartitionMove,
  type Scenario,
  ScenarioError,
  type TargetProfile,
  targetKind,
} from '@kbench/schema';
import { partitionLeader, partitionLeaders } from './admin.js';
import { type BundledListener, bundledListener } from './bundled-security.js';
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
  /** Where a target this run started keeps its data on this machine (bundled, kafka). */
  dataDir?: string;
  /** Stops what this run started and removes its data; external targets are left untouched. */
  close(): Promise<void>;
  /** Kills, pauses and restarts nodes: only for a cluster this run started (bundled, kafka). */
  faults?: FaultController;
  /** Counters of every running node since it started: only for the bundled broker or cluster. */
  brokerStats?(): Promise<ClusterNodeStats[]>;
}

export interface FaultController {
  kill(node: number): Promise<void>;
  /** Returns at once; the node is back after `ms`. */
  pause(node: number, ms: number): Promise<void>;
  restart(node: number): Promise<void>;
  /** The node leading a partition, or null while none does. */
  leaderOf(topic: string, partition: number): Promise<number | null>;
  /** Every partition's leader of some topics at once, where one request can tell (Admin metadata). */
  leaders?(topics: string[]): Promise<{ topic: string; partition: number; leader: number | null }[]>;
  /**
   * Moves leadership back to the preferred replicas (Kafka's PREFERRED election): how many partitions
   * moved, and which of `partitions`, from which node to which.
   */
  preferredLeaders(partitions: { topic: string; partition: number }[]): Promise<PreferredElection>;
  /** The cluster's node ids. */
  nodes(): number[];
  /** Partitions with the node among their replicas but not in their ISR (null when no node can tell). */
  outOfSync(node: number): Promise<number | null>;
  /** The bundled cluster's own faults (docs/scenarios.md#faults); absent on the managed Apache Kafka target. */
  bundled?: BundledFaults;
}

/** What a preferred leader election did. */
export interface PreferredElection {
  /** Partitions that changed leader, of every topic (internal ones included on kafka). */
  moved: number;
  /** Those of the partitions asked about. */
  moves: PartitionMove[];
}

/** Faults only the bundled cluster can inject: it runs in this process. */
export interface BundledFaults {
  /** Cuts a node off from its peers or its clients for `ms`, or until `heal` (ms undefined). */
  isolate(node: number, from: 'peers' | 'clients', ms: number | undefined): Promise<void>;
  /** Ends a node's isolation and slow disk. */
  heal(node: number): Promise<void>;
  /** Adds `delayMicros` to each fdatasync of a node for `ms`, or until `heal`. */
  slowDisk(node: number, delayMicros: number, ms: number | undefined): Promise<void>;
}

/** True when a bundled scenario needs the in-process cluster rather than the single broker. */
export function needsCluster(scenario: Scenario): boolean {
  return (
    scenario.cluster.nodes > 1 ||
    scenario.cluster.fsync !== 'none' ||
    scenario.faults.some((f) => f.action !== 'command')
  );
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
        message: `no profile named ${JSON.stringify(target)} in ${profiles.dir}${didYouMean(target, [
          'bundled',
          'kafka',
          ...profiles.names(),
        ])}; a target is bundled, kafka, a profile name (see kbench profile list) or bootstrap servers host:port[,host:port]`,
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
  const listener = await bundledListener(scenario.cluster.security, workDir);
  if (needsCluster(scenario)) return openBundledCluster(scenario, listener, workDir);
  const dataDir = await mkdtemp(path.join(workDir ?? os.tmpdir(), 'kbench-broker-'));
  let broker: BrokerHandle;
  try {
    broker = await startBroker({ dataDir, port: 0, ...(listener ? { security: listener.broker } : {}) });
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    await listener?.remove();
    throw err;
  }
  return {
    kind: 'bundled',
    bootstrap: [`${broker.host}:${broker.port}`],
    ...(listener ? { security: listener.clients } : {}),
    dataDir,
    brokerStats: async () => [{ nodeId: broker.nodeId, stats: broker.stats() }],
    close: async () => {
      // The data is this run's alone and goes next, so it is not flushed first (discard, not stop):
      // flushing a run's page cache to the disk took seconds, and nothing would read it again.
      try {
        await broker.discard();
      } finally {
        await rm(dataDir, { recursive: true, force: true });
        await listener?.remove();
      }
    },
  };
}

/** The bundled cluster in this process: cluster.nodes nodes with the scenario's fsync policy and listener. */
async function openBundledCluster(
  scenario: Scenario,
  listener: BundledListener | undefined,
  workDir?: string,
): Promise<Target> {
  const dataDir = await mkdtemp(path.join(workDir ?? os.tmpdir(), 'kbench-cluster-'));
  let cluster: ClusterHandle;
  try {
    cluster = await startCluster({
      nodes: scenario.cluster.nodes,
      dataDir,
      fsync: scenario.cluster.fsync,
      ...(listener ? { security: listener.broker } : {}),
    });
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    await listener?.remove();
    throw err;
  }
  return {
    kind: 'bundled',
    bootstrap: cluster.bootstrap.split(','),
    ...(listener ? { security: listener.clients } : {}),
    dataDir,
    faults: {
      kill: (node) => cluster.kill(node),
      pause: (node, ms) => cluster.pause(node, ms),
      restart: (node) => cluster.restart(node),
      leaderOf: (topic, partition) => cluster.leaderOf(topic, partition),
      preferredLeaders: async (partitions) => {
        // The controller counts what moved; the leaders before and after name the partitions asked about.
        const leaders = () => Promise.all(partitions.map((p) => cluster.leaderOf(p.topic, p.partition)));
        const before = await leaders();
        const moved = await cluster.preferredLeaders();
        const after = await leaders();
        const moves = partitions.flatMap((p, i): PartitionMove[] => {
          const to = after[i];
          return to !== null && to !== undefined && to !== before[i]
            ? [{ ...p, from: before[i] ?? null, to }]
            : [];
        });
        return { moved, moves };
      },
      nodes: () => Array.from({ length: scenario.cluster.nodes }, (_, i) => i + 1),
      outOfSync: (node) => cluster.outOfSync(node),
      bundled: {
        isolate: (node, from, ms) => cluster.isolate(node, from, ms),
        heal: (node) => cluster.heal(node),
        slowDisk: (node, delayMicros, ms) => cluster.slowDisk(node, delayMicros, ms),
      },
    },
    brokerStats: () => cluster.stats(),
    close: async () => {
      // As for one broker: the run's data goes next, unflushed.
      try {
        await cluster.discard();
      } finally {
        await rm(dataDir, { recursive: true, force: true });
        await listener?.remove();
      }
    },
  };
}

/** The partitions LeaderElectionCommand's "Successfully completed leader election (PREFERRED) for partitions a-0, b-1" names. */
export function electedPartitions(output: string): { topic: string; partition: number }[] {
  const list = /Successfully completed leader election \(\w+\) for partitions (.*)/.exec(output)?.[1] ?? '';
  return list.split(',').flatMap((name) => {
    const match = /^(.+)-(\d+)$/.exec(name.trim());
    return match ? [{ topic: match[1] as string, partition: Number(match[2]) }] : [];
  });
}

/**
 * A real Apache Kafka cluster (1..N KRaft nodes on loopback) from the official jars on Maven Central,
 * fetched with Maven on first use and cached; started for this run and stopped after it.
 */
async function openManagedKafka(nodes: number, workDir?: string): Promise<Target> {
  // Loaded on use: most runs never need Java.
  const { ensureKafkaJars, runKafkaTool, startApacheKafka } = await import('@kbench/apache-kafka');
  await ensureKafkaJars();
  const dataDir = await mkdtemp(path.join(workDir ?? os.tmpdir(), 'kbench-kafka-'));
  try {
    const kafka = await startApacheKafka({ dataDir, nodes });
    // Asked of the nodes that are up, so a killed node's port is not the one tried.
    const live = () => ({
      bootstrap: kafka.nodes.filter((n) => kafka.running(n.id)).map((n) => n.bootstrap),
    });
    return {
      kind: 'kafka',
      bootstrap: kafka.bootstrap.split(','),
      dataDir,
      faults: {
        kill: (node) => kafka.kill(node),
        pause: (node, ms) => kafka.pause(node, ms),
        restart: (node) => kafka.restart(node),
        leaderOf: (topic, partition) => partitionLeader(live(), topic, partition, () => {}),
        leaders: (topics) => partitionLeaders(live(), topics, () => {}),
        nodes: () => kafka.nodes.map((n) => n.id),
        // Every topic's partitions (internal ones too), as the metadata of a node that is up says;
        // null while none answers (a node just restarted, say).
        outOfSync: async (node) => {
          const all = await partitionLeaders(live(), [], () => {}).catch(() => null);
          if (all === null || all.length === 0) return null;
          return all.filter((p) => p.replicas.includes(node) && !p.isr.includes(node)).length;
        },
        preferredLeaders: async (partitions) => {
          // Who led the partitions before, and their preferred replicas (the first of each list).
          const topics = [...new Set(partitions.map((p) => p.topic))];
          const before = topics.length > 0 ? await partitionLeaders(live(), topics, () => {}) : [];
          // Kafka's own tool (kafka-leader-election.sh): kafkajs has no ElectLeaders.
          const tool = await runKafkaTool(
            'org.apache.kafka.tools.LeaderElectionCommand',
            [
              '--bootstrap-server',
              live().bootstrap.join(','),
              '--election-type',
              'PREFERRED',
              '--all-topic-partitions',
            ],
            { timeoutMs: 60_000 },
          );
          const out = `${tool.stdout}\n${tool.stderr}`;
          // A partition whose preferred replica is down or out of sync stays where it is, as on the
          // bundled cluster; the tool exits 1 for those, which is no failure of the fault.
          const refused = out.match(/\w+(Exception|Error): .*/g) ?? [];
          const real = refused.filter(
            (e) => !/PreferredLeaderNotAvailable|AdminCommandFailed|could not be elected/.test(e),
          );
          if (tool.timedOut || (tool.exitCode !== 0 && (real.length > 0 || refused.length === 0)))
            throw new Error(
              `kafka-leader-election failed (${tool.timedOut ? 'timed out' : `exit ${tool.exitCode}`}): ${(real[0] ?? out.trim()).slice(-400)}`,
            );
          const elected = electedPartitions(out);
          // A partition the tool elected is led by its preferred replica now.
          const moves = partitions.flatMap((p): PartitionMove[] => {
            const was = before.find((b) => b.topic === p.topic && b.partition === p.partition);
            const to = was?.replicas[0];
            const isElected = elected.some((e) => e.topic === p.topic && e.partition === p.partition);
            return isElected && was && to !== undefined ? [{ ...p, from: was.leader, to }] : [];
          });
          return { moved: elected.length, moves };
        },
      },
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
