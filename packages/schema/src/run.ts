// What a run produces: per-second samples, a summary, and the record kept in the history.
import type { AgentsRun } from './agents.js';
import type { Scenario } from './scenario.js';

export const RUN_STATUSES = ['running', 'completed', 'stopped', 'failed', 'aborted'] as const;
/** completed: ran its course; stopped: a person stopped it; failed: an error ended it; aborted: its process died. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Latency percentiles in milliseconds (HDR histograms are kept in microseconds). */
export interface LatencySummary {
  count: number;
  p50: number;
  p75: number;
  p95: number;
  p99: number;
  p999: number;
  p9999: number;
  max: number;
  mean: number;
  /** Mean of the slowest 10% (Sangrenel's figure). */
  worst10Mean: number;
}

export const LATENCY_KEYS = [
  'p50',
  'p75',
  'p95',
  'p99',
  'p999',
  'p9999',
  'max',
  'mean',
  'worst10Mean',
] as const;

/** One interval of about a second. Counts are for the interval, not cumulative. */
export interface Sample {
  /** Seconds since load started (end of this interval), warm-up included. */
  t: number;
  /** Length of this interval in ms, so rates are counts / intervalMs * 1000. */
  intervalMs: number;
  warmup: boolean;
  producedRecords: number;
  /** Value bytes produced (MB/s in the summary counts these, as the 2014 Kafka benchmark does). */
  producedBytes: number;
  consumedRecords: number;
  consumedBytes: number;
  errors: number;
  /** Records produced and not yet consumed, at the end of the interval (0 without consumers). */
  backlog: number;
  publishP50Ms: number | null;
  publishP99Ms: number | null;
  publishMaxMs: number | null;
  e2eP50Ms: number | null;
  e2eP99Ms: number | null;
  e2eMaxMs: number | null;
  /** What each node of a bundled broker or cluster did in this interval (absent for other targets). */
  broker?: BrokerNodeSample[];
}

/** One node of the bundled broker or cluster over one sample interval. Optional figures need a broker that counts them. */
export interface BrokerNodeSample {
  node: number;
  /** Bytes of requests received / responses sent, per second. */
  bytesInPerSec: number;
  bytesOutPerSec: number;
  /** fsyncs of log segments in the interval. */
  fsyncs?: number;
  /** Mean fsync latency in the interval (null without fsyncs). */
  fsyncMeanMs?: number | null;
  /** The slowest fsync since the node started (the broker keeps a running maximum). */
  fsyncMaxMs?: number;
  /** Partitions this node leads whose ISR is smaller than their replica set, at the end of the interval. */
  underReplicated?: number;
  /** ISR shrinks and expands in the interval. */
  isrShrinks?: number;
  isrExpands?: number;
  /** Bytes replicated (follower fetches) per second. */
  replicatedBytesPerSec?: number;
  /** Bytes of log on the node at the end of the interval. */
  logSizeBytes: number;
}

/** A fault of the scenario's timeline as the run executed it. */
export interface FaultEvent {
  /** Seconds since load started, as samples' t. */
  t: number;
  action: 'kill' | 'pause' | 'restart';
  /** As the scenario wrote it: a node id or leader:<topic>-<partition>. */
  target: number | string;
  /** The node acted on, or null when it could not be resolved. */
  node: number | null;
  /** How long a pause lasts, in ms; null for kill and restart. */
  durationMs: number | null;
  /** Why the fault failed, or null. */
  error: string | null;
}

export interface ThroughputSummary {
  records: number;
  recordsPerSec: number;
  /** Value bytes per second in MiB (1,048,576 bytes), as Kafka's tools count MB. */
  mbPerSec: number;
}

/** How hard the load generator itself worked, so a reader can tell whether it was the bottleneck. */
export interface ClientLoad {
  /** CPU time of the kbench process per second of the measured phase (1 = one core busy). */
  cpuCores: number;
  /** True when the bundled broker ran inside the kbench process, so cpuCores includes it. */
  includesBroker: boolean;
  /** Mean busy fraction (0..1) of the busiest producer thread, or null without producers. */
  producerBusy: number | null;
  /** Mean busy fraction (0..1) of the busiest consumer thread, or null without consumers. */
  consumerBusy: number | null;
}

/** One fixed-rate trial of a find-max search. */
export interface FindMaxTrial {
  /** The rate tried in records/s, or null for the closed-loop probe that sets the ceiling. */
  rate: number | null;
  achievedPerSec: number;
  publishP99Ms: number | null;
  /** Records the consumers fell further behind by during the trial (0 without consumers). */
  backlogGrowth: number;
  errors: number;
  pass: boolean;
  /** Why it failed, or 'ok'. */
  reason: string;
}

export interface FindMaxResult {
  /** The highest rate that passed (records/s), or null if none did; the measured phase ran at it. */
  rate: number | null;
  trials: FindMaxTrial[];
}

export interface RunSummary {
  /** Length of the measured phase (warm-up excluded), in seconds. */
  measuredSeconds: number;
  produced: ThroughputSummary & { wireMbPerSec: number | null; errors: number };
  consumed: ThroughputSummary;
  publishLatencyMs: LatencySummary | null;
  endToEndLatencyMs: LatencySummary | null;
  /** Absent in runs stored before it was measured. */
  client?: ClientLoad;
  /** Present when producers.rate was find-max. */
  findMax?: FindMaxResult;
}

/**
 * The throughput a run is listed by: what it produced, or what it consumed when it produced nothing
 * (consumers reading a preloaded backlog), so that a consumer-only run does not read as 0.
 */
export function listedThroughput(summary: RunSummary): {
  side: 'produced' | 'consumed';
  recordsPerSec: number;
  mbPerSec: number;
} {
  const side = summary.produced.records === 0 && summary.consumed.records > 0 ? 'consumed' : 'produced';
  return { side, recordsPerSec: summary[side].recordsPerSec, mbPerSec: summary[side].mbPerSec };
}

/** An external (or managed) cluster as it described itself when the run began. */
export interface ClusterDescription {
  clusterId: string | null;
  controllerId: number | null;
  /** The brokers the cluster lists (DescribeCluster). */
  brokers: { nodeId: number; host: string; port: number; rack?: string | null }[];
  /** ApiVersions of the first bootstrap server that answered: API name -> "min-max". */
  apiVersions: Record<string, string>;
  /** What the ApiVersions suggest about the software, e.g. "Kafka protocol of Apache Kafka 4.0 or later". */
  versionHint: string;
  /** The first load topic's configs as the cluster describes them (every topic of the run has the same). */
  topicConfigs: { topic: string; configs: Record<string, string | null> } | null;
}

export interface Environment {
  cores: number;
  cpuModel: string;
  memoryBytes: number;
  os: string;
  hostname: string;
  versions: Record<string, string>;
  /** bundled | kafka | external */
  target: string;
  /** The bootstrap servers the load went to. */
  bootstrap: string;
  driver: string;
  /** The target profile the run used (never its secrets). */
  profile?: string;
  /** PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, and the SASL mechanism. */
  security?: string;
  /** The rate ceiling in force (records/s), from the profile's maxRate or --max-rate. */
  rateCeiling?: number;
  /** Described by the cluster itself; external and kafka targets. */
  cluster?: ClusterDescription;
  /**
   * The Kafka client properties the load ran with, by name, as each driver applied them (the
   * scenario's producers.config and consumers.config, the knobs they duplicate, and the driver's
   * defaults for the rest); absent for runs that ended before their clients started.
   */
  clientProperties?: { producers?: Record<string, string>; consumers?: Record<string, string> };
  /**
   * Set on a virtual machine that hands free memory back to its host (virtio-balloon free page
   * reporting): page cache that grows into such memory is slower to write, which bends long
   * write-heavy runs (docs/benchmarks.md).
   */
  memoryNote?: string;
  /** The load agents the clients ran on, and what each did (docs/agents.md); absent without agents. */
  agents?: AgentsRun;
}

export interface RunRecord {
  id: string;
  status: RunStatus;
  /** The fully resolved scenario, so the run can be repeated exactly. */
  scenario: Scenario;
  /** Where the scenario came from (a file path), if anywhere. */
  source: string | null;
  environment: Environment;
  summary: RunSummary | null;
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
  tags: string[];
  notes: string;
  /** The faults the run executed (absent for runs without a fault timeline). */
  faults?: FaultEvent[];
  /**
   * The other runs that were going on this machine while this one ran (started with an override of
   * the run slot, `--concurrent`), absent for a run that had the machine to itself. Both runs record it.
   */
  concurrentWith?: string[];
  /** The value of the sweep's knob this run measured, as the scenario writes it (a sweep's runs only). */
  sweepValue?: string;
  /**
   * The series the run belongs to, shared by its runs: a reproduction's `reproduce:<folder>:<time>`,
   * or a sweep's or a comparison of targets' id (absent for a run alone).
   */
  series?: string;
}

/** The warning shown wherever the figures of a run that shared the machine appear. */
export function concurrentWarning(others: readonly string[]): string {
  const which = others.length === 1 ? `run ${others[0]}` : `runs ${others.join(', ')}`;
  return `ran at the same time as ${which} on this machine: they shared its cores, memory and disk, so these figures are not those of a run alone`;
}

/** A row of the run list: enough for a table without loading samples. */
export type RunListItem = Omit<RunRecord, 'scenario' | 'environment' | 'faults'> & {
  name: string;
  target: string;
  driver: string;
};
