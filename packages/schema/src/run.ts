// What a run produces: per-second samples, a summary, and the record kept in the history. Each shape
// is a zod schema, the one declaration of it: the types are inferred from it, and the server's route
// schemas are generated from it (`jsonSchemaOf`), so the web app and the API read the same shape.
import { z } from 'zod';
import { agentsRunSchema } from './agents.js';
import { COMMAND_FAULT, FAULT_ACTIONS, type Scenario } from './scenario.js';

export const RUN_STATUSES = ['running', 'completed', 'stopped', 'failed', 'aborted'] as const;
/** completed: ran its course; stopped: a person stopped it; failed: an error ended it; aborted: its process died. */
export const runStatusSchema = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof runStatusSchema>;

/** Latency percentiles in milliseconds (HDR histograms are kept in microseconds). */
export const latencySummarySchema = z.object({
  count: z.number(),
  p50: z.number(),
  p75: z.number(),
  p95: z.number(),
  p99: z.number(),
  p999: z.number(),
  p9999: z.number(),
  max: z.number(),
  mean: z.number(),
  /** Mean of the slowest 10% (Sangrenel's figure). */
  worst10Mean: z.number(),
});
export type LatencySummary = z.infer<typeof latencySummarySchema>;

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

/** Where a node's figures came from: the bundled broker's counters, or a scraped Prometheus endpoint of that kind. */
export const BROKER_FIGURE_SOURCES = ['bundled', 'kafka-jmx', 'redpanda', 'kbench'] as const;

/**
 * One node of the bundled broker or cluster over one sample interval, or one scraped metrics
 * endpoint of the target's (`source` set, `name` the profile's node name). Optional figures need a
 * broker, or an endpoint, that counts them.
 */
export const brokerNodeSampleSchema = z.object({
  /** The bundled node's id; for a scraped endpoint, its place in the profile's list (1, 2, ...). */
  node: z.number(),
  /** Absent: the bundled broker. */
  source: z.enum(BROKER_FIGURE_SOURCES).optional(),
  /** A scraped endpoint's node name (the profile's `node`, or host:port). */
  name: z.string().optional(),
  /** Produce request latency the endpoint reports, in ms (the exporter's own window: see docs/targets.md). */
  produceP50Ms: z.number().nullable().optional(),
  produceP99Ms: z.number().nullable().optional(),
  /** CPU cores the node's process used over the interval (1 = one core busy). */
  cpuCores: z.number().nullable().optional(),
  /** Bytes of requests received / responses sent, per second. */
  bytesInPerSec: z.number(),
  bytesOutPerSec: z.number(),
  /** Durable writes of the log in the interval: journal writes under fsync batch, segment fdatasyncs otherwise. */
  fsyncs: z.number().optional(),
  /** Their mean latency in the interval (null without any). */
  fsyncMeanMs: z.number().nullable().optional(),
  /** The slowest fsync since the node started (the broker keeps a running maximum). */
  fsyncMaxMs: z.number().optional(),
  /** Partitions this node leads whose ISR is smaller than their replica set, at the end of the interval. */
  underReplicated: z.number().optional(),
  /** ISR shrinks and expands in the interval. */
  isrShrinks: z.number().optional(),
  isrExpands: z.number().optional(),
  /** Bytes replicated (follower fetches) per second. */
  replicatedBytesPerSec: z.number().optional(),
  /** Bytes of log on the node at the end of the interval (absent for an endpoint that does not say). */
  logSizeBytes: z.number().optional(),
});
export type BrokerNodeSample = z.infer<typeof brokerNodeSampleSchema>;

/** One interval of about a second. Counts are for the interval, not cumulative. */
export const sampleSchema = z.object({
  /** Seconds since load started (end of this interval), warm-up included. */
  t: z.number(),
  /** Length of this interval in ms, so rates are counts / intervalMs * 1000. */
  intervalMs: z.number(),
  warmup: z.boolean(),
  producedRecords: z.number(),
  /** Value bytes produced (MB/s in the summary counts these, as the 2014 Kafka benchmark does). */
  producedBytes: z.number(),
  consumedRecords: z.number(),
  consumedBytes: z.number(),
  errors: z.number(),
  /** Records produced and not yet consumed, at the end of the interval (0 without consumers). */
  backlog: z.number(),
  publishP50Ms: z.number().nullable(),
  publishP99Ms: z.number().nullable(),
  publishMaxMs: z.number().nullable(),
  e2eP50Ms: z.number().nullable(),
  e2eP99Ms: z.number().nullable(),
  e2eMaxMs: z.number().nullable(),
  /**
   * Share of all this machine's cores that was busy in the interval, 0..1 (the clients, a bundled
   * broker and anything else on it), from /proc/stat; absent where there is none, and in older runs.
   */
  machineCpuBusy: z.number().nullable().optional(),
  /**
   * The part of it that ran outside the run's own processes (summary.machine.othersCores), 0..1;
   * null where that could not be told.
   */
  machineOthersBusy: z.number().nullable().optional(),
  /**
   * Bytes the disk under the broker's data directory wrote in the interval (every writer on that
   * disk), from /proc/diskstats; null when the broker's data is elsewhere, or on no single disk of this
   * machine (tmpfs; a file system over several devices).
   */
  diskWrittenBytes: z.number().nullable().optional(),
  /** What each node of a bundled broker or cluster did in this interval (absent for other targets). */
  broker: z.array(brokerNodeSampleSchema).optional(),
});
export type Sample = z.infer<typeof sampleSchema>;

/** What the machine kbench ran on did over a run's measured phase, from /proc (Linux). */
export const machineUseSchema = z.object({
  /** Share of all its cores that was busy, 0..1: the clients, a bundled broker, anything else. */
  cpuBusy: z.number(),
  /** Its cores. */
  cores: z.number(),
  /**
   * The disk under the broker's data directory (bundled and kafka targets), e.g. `vda`; null when
   * the data is elsewhere (an external cluster) or on no single disk (tmpfs, btrfs).
   */
  disk: z.string().nullable(),
  /** Bytes that disk wrote (every writer on it), null without a disk. */
  diskWrittenBytes: z.number().nullable(),
  /**
   * Cores busy on average outside kbench's own processes (this process and those it started: a
   * managed Kafka's JVMs, a bundled cluster's nodes), the kernel's own threads included; null where
   * it could not be told, absent in older runs.
   */
  othersCores: z.number().nullable().optional(),
});
export type MachineUse = z.infer<typeof machineUseSchema>;

/** What a command fault's command did: its exit, its time and its output (bounded). */
export const commandOutcomeSchema = z.object({
  /** The command line as the scenario wrote it. */
  run: z.string(),
  /** Wall-clock start and end (ISO 8601). */
  startedAt: z.string(),
  endedAt: z.string(),
  /** Seconds since load started when it ended, as samples' t. */
  endT: z.number(),
  /** The exit code, or null when a signal ended it. */
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  /** Killed for outliving its timeout. */
  timedOut: z.boolean(),
  /** Killed because the run ended first. */
  killedAtRunEnd: z.boolean(),
  /** The first and last 16 KiB of each stream; what lay between is counted, not kept. */
  stdout: z.string(),
  stdoutOmittedBytes: z.number(),
  stderr: z.string(),
  stderrOmittedBytes: z.number(),
});
export type CommandOutcome = z.infer<typeof commandOutcomeSchema>;

/**
 * What a fault cost, measured from the run's samples (docs/scenarios.md#recovery-figures). Times are seconds from
 * the fault's start; their resolution is the sample interval around faults (faultSampleIntervalMs,
 * 100 ms by default). The fault's window runs from its start to `windowEndT`.
 */
export const faultRecoverySchema = z.object({
  /** The end of the fault's window (seconds since load started): recovery, the next fault, or the end of load. */
  windowEndT: z.number(),
  /**
   * The longest run of consecutive samples from the fault's start on in which no record was
   * acknowledged, in seconds (to the sample interval); null without producers.
   */
  noAckSec: z.number().nullable(),
  /** The level recovery is measured against: acked records/s in the 5 s before the fault, or an open-loop run's rate. */
  levelPerSec: z.number().nullable(),
  /** Seconds until acked throughput was back to 90% of that level and stayed there for 1 s; null with `recoveryNote` if not. */
  recoverySec: z.number().nullable(),
  /** Why `recoverySec` is null (no level before the fault, the run ended first, another fault came first). */
  recoveryNote: z.string().nullable(),
  /** The worst latencies of records acknowledged (publish) or consumed (end-to-end) in the window, from its exact histograms. */
  publishP99Ms: z.number().nullable(),
  publishMaxMs: z.number().nullable(),
  e2eP99Ms: z.number().nullable(),
  e2eMaxMs: z.number().nullable(),
  /** Errors the clients counted in the window (failed sends, and retried requests where the driver counts those). */
  errors: z.number(),
  /** Records the producers put back to be sent again in the window (native driver; null where not counted). */
  retries: z.number().nullable(),
  /**
   * Bundled cluster: ms from the fault until every partition the node led had another leader, polled
   * every 20 ms; null with `leaderNote` where that does not apply.
   */
  leaderElectionMs: z.number().nullable(),
  leaderNote: z.string().nullable(),
});
export type FaultRecovery = z.infer<typeof faultRecoverySchema>;

/** One node of a rolling restart: when it was restarted, and when it was back in every ISR. */
export const rollingStepSchema = z.object({
  node: z.number(),
  /** Seconds since load started: the restart began, the node answered again, it was in the ISR of all its partitions. */
  t: z.number(),
  upT: z.number().nullable(),
  inSyncT: z.number().nullable(),
  /** Why the step failed (the node did not start, or was not back in sync within the bound), or null. */
  error: z.string().nullable(),
});
export type RollingStep = z.infer<typeof rollingStepSchema>;

/** A partition a preferred-leaders fault moved: from the node that led it (null: none) to its preferred replica. */
export const partitionMoveSchema = z.object({
  topic: z.string(),
  partition: z.number(),
  from: z.number().nullable(),
  to: z.number(),
});
export type PartitionMove = z.infer<typeof partitionMoveSchema>;

/** A fault of the scenario's timeline as the run executed it. */
export const faultEventSchema = z.object({
  /** Seconds since load started, as samples' t. */
  t: z.number(),
  action: z.enum([...FAULT_ACTIONS, COMMAND_FAULT]),
  /** As the scenario wrote it: a node id or leader:<topic>-<partition>; a command fault's command line. */
  target: z.union([z.number(), z.string()]),
  /** The node acted on, or null when it could not be resolved. */
  node: z.number().nullable(),
  /** How long a pause, isolate or slow-disk lasts, in ms; null for the others and until a heal. */
  durationMs: z.number().nullable(),
  /** Why the fault failed, or null. */
  error: z.string().nullable(),
  /**
   * How long it waited for the timeline's fault still under way on its node (a restart still
   * starting the node) before it acted, in ms; `t` is when it acted. Absent when it did not wait.
   */
  waitedMs: z.number().optional(),
  /** What a command fault's command did (absent for other faults). */
  command: commandOutcomeSchema.optional(),
  /** A rolling restart's nodes in turn (absent for other faults). */
  steps: z.array(rollingStepSchema).optional(),
  /** A preferred-leaders fault: how many partitions moved back to their preferred replica. */
  moved: z.number().optional(),
  /** Of those, the run's own partitions (at most 256), each from the node that led it to the one that leads it now. */
  moves: z.array(partitionMoveSchema).optional(),
  /** What the fault cost (absent in runs stored before it was measured). */
  recovery: faultRecoverySchema.optional(),
});
export type FaultEvent = z.infer<typeof faultEventSchema>;

export const throughputSummarySchema = z.object({
  records: z.number(),
  recordsPerSec: z.number(),
  /** Value bytes per second in MiB (1,048,576 bytes), as Kafka's tools count MB. */
  mbPerSec: z.number(),
});
export type ThroughputSummary = z.infer<typeof throughputSummarySchema>;

/** How hard the load generator itself worked, so a reader can tell whether it was the bottleneck. */
export const clientLoadSchema = z.object({
  /** CPU time of the kbench process per second of the measured phase (1 = one core busy). */
  cpuCores: z.number(),
  /** True when the bundled broker ran inside the kbench process, so cpuCores includes it. */
  includesBroker: z.boolean(),
  /** Mean busy fraction (0..1) of the busiest producer thread, or null without producers. */
  producerBusy: z.number().nullable(),
  /** Mean busy fraction (0..1) of the busiest consumer thread, or null without consumers. */
  consumerBusy: z.number().nullable(),
});
export type ClientLoad = z.infer<typeof clientLoadSchema>;

/** One fixed-rate trial of a find-max search. */
export const findMaxTrialSchema = z.object({
  /** The rate tried in records/s, or null for the closed-loop probe that sets the ceiling. */
  rate: z.number().nullable(),
  achievedPerSec: z.number(),
  publishP99Ms: z.number().nullable(),
  /** Records the consumers fell further behind by during the trial (0 without consumers). */
  backlogGrowth: z.number(),
  errors: z.number(),
  pass: z.boolean(),
  /** Why it failed, or 'ok'. */
  reason: z.string(),
});
export type FindMaxTrial = z.infer<typeof findMaxTrialSchema>;

export const findMaxResultSchema = z.object({
  /** The highest rate that passed (records/s), or null if none did; the measured phase ran at it. */
  rate: z.number().nullable(),
  trials: z.array(findMaxTrialSchema),
});
export type FindMaxResult = z.infer<typeof findMaxResultSchema>;

/** One message the clients' errors said, and how many errors said it. */
export const clientErrorSchema = z.object({
  role: z.enum(['producer', 'consumer']),
  message: z.string(),
  count: z.number(),
});
export type ClientError = z.infer<typeof clientErrorSchema>;

/** What the log check counted, in one partition or in all. */
export const verificationCountsSchema = z.object({
  /** Records the producers had acknowledged. */
  acknowledged: z.number(),
  /** Acknowledged records found in the log. */
  found: z.number(),
  /** Acknowledged records absent from the log. */
  lost: z.number(),
  /** Extra copies of records found more than once. */
  duplicated: z.number(),
  /** Records found after a later record of the same producer. */
  reordered: z.number(),
  /** Records in the log whose send was not acknowledged (failed or unanswered sends that landed): normal, not judged. */
  unacknowledgedPresent: z.number(),
  /** Records in the log no producer of the run marked. */
  foreign: z.number(),
});
export type VerificationCounts = z.infer<typeof verificationCountsSchema>;

export const VERIFICATION_VERDICTS = ['passed', 'allowed', 'failed', 'not-run'] as const;

/**
 * The check of what was acknowledged against what is in the log, after the measured phase (issue 19):
 * passed (0 lost, 0 duplicated, 0 reordered), allowed (some, each allowed by the scenario's settings),
 * failed (some the settings do not allow) or not-run (with why).
 */
export const verificationSchema = z.object({
  verdict: z.enum(VERIFICATION_VERDICTS),
  /** The verdict in a sentence, e.g. "12 lost, allowed by acks=1". */
  statement: z.string(),
  /** The settings that allow each kind of miss, null when none does. */
  allows: z.object({
    lost: z.string().nullable(),
    duplicated: z.string().nullable(),
    reordered: z.string().nullable(),
  }),
  /** Null when the check did not run. */
  totals: verificationCountsSchema.nullable(),
  partitions: z.array(verificationCountsSchema.extend({ topic: z.string(), partition: z.number() })),
});
export type Verification = z.infer<typeof verificationSchema>;

export const runSummarySchema = z.object({
  /** Length of the measured phase (warm-up excluded), in seconds. */
  measuredSeconds: z.number(),
  produced: throughputSummarySchema.extend({ wireMbPerSec: z.number().nullable(), errors: z.number() }),
  consumed: throughputSummarySchema,
  publishLatencyMs: latencySummarySchema.nullable(),
  endToEndLatencyMs: latencySummarySchema.nullable(),
  /** Absent in runs stored before it was measured. */
  client: clientLoadSchema.optional(),
  /** The machine's CPU and disk over the measured phase; absent off Linux and in older runs. */
  machine: machineUseSchema.optional(),
  /** Present when producers.rate was find-max. */
  findMax: findMaxResultSchema.optional(),
  /** Present when the run had faults or `verify: true`. */
  verification: verificationSchema.optional(),
  /**
   * What the measured phase's client errors said, present when there were any: each distinct message
   * of producers and of consumers with its count, most frequent first (at most 16 per role, the rest
   * counted as "(other error messages)"). The counts add up to `produced.errors`.
   */
  clientErrors: z.array(clientErrorSchema).optional(),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

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
export const clusterDescriptionSchema = z.object({
  clusterId: z.string().nullable(),
  controllerId: z.number().nullable(),
  /** The brokers the cluster lists (DescribeCluster). */
  brokers: z.array(
    z.object({
      nodeId: z.number(),
      host: z.string(),
      port: z.number(),
      rack: z.string().nullable().optional(),
    }),
  ),
  /** ApiVersions of the first bootstrap server that answered: API name -> "min-max". */
  apiVersions: z.record(z.string(), z.string()),
  /** What the ApiVersions suggest about the software, e.g. "Kafka protocol of Apache Kafka 4.0 or later". */
  versionHint: z.string(),
  /** The first load topic's configs as the cluster describes them (every topic of the run has the same). */
  topicConfigs: z
    .object({ topic: z.string(), configs: z.record(z.string(), z.string().nullable()) })
    .nullable(),
});
export type ClusterDescription = z.infer<typeof clusterDescriptionSchema>;

const stringMap = z.record(z.string(), z.string());

/** A metrics endpoint as a run scraped it: what it was, how often it answered, and why not when it did not. */
export const metricsEndpointRunSchema = z.object({
  url: z.string(),
  /** The node number its figures carry in the samples' broker figures. */
  node: z.number(),
  name: z.string(),
  /** The kind the profile gave, or the one auto found (null: never told). */
  kind: z.enum(['kafka-jmx', 'redpanda', 'kbench']).nullable(),
  scrapes: z.number(),
  failed: z.number(),
  /** The last failure's reason, or null. */
  lastError: z.string().nullable(),
  /** Standard figures the endpoint never had (e.g. produce latency with kbench-broker). */
  missing: z.array(z.string()),
});
export type MetricsEndpointRun = z.infer<typeof metricsEndpointRunSchema>;

/** Where a run ran. Open-ended: fields added later, or by another version, pass through the API whole. */
export const environmentSchema = z.looseObject({
  cores: z.number(),
  cpuModel: z.string(),
  memoryBytes: z.number(),
  os: z.string(),
  hostname: z.string(),
  versions: stringMap,
  /** bundled | kafka | external */
  target: z.string(),
  /** The bootstrap servers the load went to. */
  bootstrap: z.string(),
  driver: z.string(),
  /** The target profile the run used (never its secrets). */
  profile: z.string().optional(),
  /** PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, and the SASL mechanism. */
  security: z.string().optional(),
  /** The rate ceiling in force (records/s), from the profile's maxRate or --max-rate. */
  rateCeiling: z.number().optional(),
  /** Described by the cluster itself; external and kafka targets. */
  cluster: clusterDescriptionSchema.optional(),
  /**
   * The Kafka client properties the load ran with, by name, as each driver applied them (the
   * scenario's producers.config and consumers.config, the knobs they duplicate, and the driver's
   * defaults for the rest); absent for runs that ended before their clients started.
   */
  clientProperties: z.object({ producers: stringMap.optional(), consumers: stringMap.optional() }).optional(),
  /**
   * Set on a virtual machine that hands free memory back to its host (virtio-balloon free page
   * reporting): page cache that grows into such memory is slower to write, which bends long
   * write-heavy runs (docs/benchmarks.md).
   */
  memoryNote: z.string().optional(),
  /** The load agents the clients ran on, and what each did (docs/agents.md); absent without agents. */
  agents: agentsRunSchema.optional(),
  /** The profile's metrics endpoints as the run scraped them; absent without any. */
  metrics: z.array(metricsEndpointRunSchema).optional(),
});
export type Environment = z.infer<typeof environmentSchema>;

/** The fully resolved scenario as a run stores it: validated by `parseScenario`, passed through the API whole. */
export const resolvedScenarioSchema = z
  .custom<Scenario>((v) => typeof v === 'object' && v !== null)
  .meta({ type: 'object', additionalProperties: true });

/** What a run record and a row of the run list share. */
const runFields = {
  id: z.string(),
  status: runStatusSchema,
  /** Where the scenario came from (a file path), if anywhere. */
  source: z.string().nullable(),
  summary: runSummarySchema.nullable(),
  error: z.string().nullable(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  tags: z.array(z.string()),
  notes: z.string(),
  /**
   * The other runs that were going on this machine while this one ran (started with an override of
   * the run slot, `--concurrent`), absent for a run that had the machine to itself. Both runs record it.
   */
  concurrentWith: z.array(z.string()).optional(),
  /** The value of the sweep's knob this run measured, as the scenario writes it (a sweep's runs only). */
  sweepValue: z.string().optional(),
  /**
   * The series the run belongs to, shared by its runs: a reproduction's `reproduce:<folder>:<time>`,
   * or a sweep's or a comparison of targets' id (absent for a run alone).
   */
  series: z.string().optional(),
};

export const runRecordSchema = z.object({
  ...runFields,
  /** The fully resolved scenario, so the run can be repeated exactly. */
  scenario: resolvedScenarioSchema,
  environment: environmentSchema,
  /** The faults the run executed (absent for runs without a fault timeline). */
  faults: z.array(faultEventSchema).optional(),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

/** The warning shown wherever the figures of a run that shared the machine appear. */
export function concurrentWarning(others: readonly string[]): string {
  const which = others.length === 1 ? `run ${others[0]}` : `runs ${others.join(', ')}`;
  return `ran at the same time as ${which} on this machine: they shared its cores, memory and disk, so these figures are not those of a run alone`;
}

/** A row of the run list: enough for a table without loading samples. */
export const runListItemSchema = z.object({
  ...runFields,
  name: z.string(),
  target: z.string(),
  driver: z.string(),
});
export type RunListItem = z.infer<typeof runListItemSchema>;

export const phaseSchema = z.enum([
  'starting',
  'setup',
  'preload',
  'search',
  'warmup',
  'measuring',
  'stopping',
  'done',
]);
export type Phase = z.infer<typeof phaseSchema>;

/** Where a run under way has got to: the engine's progress events, and the live page's. */
export const progressSchema = z.object({
  phase: phaseSchema,
  /** Since load began (0 before). */
  elapsedMs: z.number(),
  /** Warm-up plus measured time, or null when the run is bounded by a record count. */
  totalMs: z.number().nullable(),
  producedRecords: z.number(),
  consumedRecords: z.number(),
  targetRecords: z.number().nullable(),
});
export type Progress = z.infer<typeof progressSchema>;
