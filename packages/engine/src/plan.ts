// A dry run: what a run would create on its target and the load it would send, worked out from the
// scenario, the profile and the rate ceiling alone. Nothing connects to the target.
import {
  describeMessageSize,
  describeSecurity,
  meanMessageSize,
  parseDurationMs,
  type Scenario,
  scenarioClientProperties,
  targetKind,
} from '@kbench/schema';
import { bundledSecurityName } from './bundled-security.js';
import { payloadFileBytes } from './payload.js';
import { ProfileStore } from './profiles.js';
import { assertSupported, rateCeiling } from './supported.js';
import { targetProfile } from './target.js';

export interface RunPlan {
  target: {
    /** As the scenario names it. */
    name: string;
    kind: 'bundled' | 'kafka' | 'external';
    /** Bootstrap servers, when known before the run (profiles and host:port targets). */
    bootstrap: string | null;
    profile: string | null;
    /** PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (and the mechanism). */
    security: string;
    /** Nodes kbench starts (bundled, kafka), or null for a cluster it only uses. */
    nodes: number | null;
  };
  topics: {
    /** `<prefix>-<run id>-<n>`: the run id is drawn when the run starts. */
    pattern: string;
    count: number;
    idle: number;
    partitions: number;
    replicationFactor: number;
    configs: Record<string, string>;
    /** What happens to them after the run. */
    afterRun: 'deleted' | 'kept' | 'discarded with the cluster';
    ifExists: 'fail' | 'reuse';
  };
  load: {
    producers: number;
    consumers: number;
    consumerGroups: number;
    acks: string;
    /** Mean value bytes of a record. */
    messageBytes: number;
    messageSize: string;
    /** As the scenario says: a number, max or find-max. */
    rate: number | 'max' | 'find-max';
    /** Records/s the run will aim at: the fixed rate, the ceiling for a capped max, or null (as fast as it goes). */
    targetRate: number | null;
    rateCeiling: number | null;
    durationMs: number | null;
    warmupMs: number;
    records: number | null;
    /** Bytes preloaded before the measured phase (consumers.backlog). */
    preloadBytes: number;
    /** Records and value bytes the run sends at most (find-max search included), or null when unbounded by rate. */
    estimatedRecords: number | null;
    estimatedBytes: number | null;
    /** Kafka properties the driver is given, by name (knobs it honours included); empty without producers. */
    producerProperties: Record<string, string>;
    /** The same for consumers. */
    consumerProperties: Record<string, string>;
  };
  notes: string[];
}

/** The plan of a run, validated as a real run would be (throws ScenarioError for what cannot run). */
export function planRun(s: Scenario, options: { profiles?: ProfileStore; maxRate?: number } = {}): RunPlan {
  const profiles = options.profiles ?? new ProfileStore();
  assertSupported(s, { profiles, ...(options.maxRate !== undefined ? { maxRate: options.maxRate } : {}) });
  const kind = targetKind(s.target);
  const profile = targetProfile(s.target, profiles);
  const ceiling = rateCeiling(profile, options.maxRate) ?? null;
  const size = s.producers.messageSize;
  const messageBytes = meanMessageSize(size) ?? payloadFileBytes(size);
  const durationMs = s.duration === undefined ? null : (parseDurationMs(s.duration) ?? null);
  const notes: string[] = [];

  let targetRate: number | null = typeof s.producers.rate === 'number' ? s.producers.rate : null;
  if (s.producers.rate === 'max' && ceiling !== null) {
    targetRate = ceiling;
    notes.push(`rate max is capped at the ceiling: a fixed ${ceiling} records/s (open loop)`);
  }
  if (s.producers.rate === 'find-max') {
    notes.push(
      ceiling !== null
        ? `find-max searches up to the ceiling of ${ceiling} records/s, then measures at the rate found`
        : 'find-max searches with a closed-loop probe (as fast as the target takes), then measures at the rate found',
    );
  }
  let estimatedRecords: number | null = null;
  if (s.producers.count === 0) estimatedRecords = 0;
  else if (s.records !== undefined) estimatedRecords = s.records;
  else if (durationMs !== null) {
    const searchMs =
      s.producers.rate === 'find-max' ? s.findMax.maxTrials * (parseDurationMs(s.findMax.trial) ?? 0) : 0;
    const rate = s.producers.rate === 'find-max' ? ceiling : targetRate;
    if (rate !== null) estimatedRecords = Math.ceil((rate * (durationMs + searchMs)) / 1000);
  }
  if (estimatedRecords === null) notes.push('rate max without a ceiling: as fast as the target takes');
  const preloadBytes = s.consumers.backlog;
  if (preloadBytes > 0) notes.push(`preloads ${preloadBytes} bytes before the measured phase`);
  const estimatedBytes =
    estimatedRecords === null ? null : Math.round(estimatedRecords * messageBytes) + preloadBytes;

  const external = kind === 'bootstrap' || kind === 'profile';
  const afterRun = kind === 'bundled' ? 'discarded with the cluster' : s.topics.keep ? 'kept' : 'deleted';
  if (external)
    notes.push(
      'a dry run does not connect to the target; a run fails if a topic of the planned name exists (unless topics.ifExists is reuse)',
    );
  return {
    target: {
      name: s.target,
      kind: external ? 'external' : (kind as 'bundled' | 'kafka'),
      bootstrap: profile?.bootstrap ?? (kind === 'bootstrap' ? s.target : null),
      profile: profile?.name ?? null,
      security: profile ? describeSecurity(profile) : (bundledSecurityName(s) ?? 'PLAINTEXT'),
      nodes: external ? null : s.cluster.nodes,
    },
    topics: {
      pattern: `${s.topics.prefix}-<run id>-<n>`,
      count: s.topics.count,
      idle: s.topics.idle,
      partitions: s.topics.partitions,
      replicationFactor: s.topics.replicationFactor,
      configs: { 'min.insync.replicas': String(s.topics.minInsyncReplicas), ...s.topics.config },
      afterRun,
      ifExists: s.topics.ifExists,
    },
    load: {
      producers: s.producers.count,
      consumers: s.consumers.count,
      consumerGroups: s.consumers.count > 0 ? s.consumers.groups : 0,
      acks: String(s.producers.acks),
      messageBytes,
      messageSize: describeMessageSize(size),
      rate: s.producers.rate,
      targetRate,
      rateCeiling: ceiling,
      durationMs,
      warmupMs: parseDurationMs(s.warmup) ?? 0,
      records: s.records ?? null,
      preloadBytes,
      estimatedRecords,
      estimatedBytes,
      producerProperties: s.producers.count > 0 ? scenarioClientProperties(s, 'producers') : {},
      consumerProperties: s.consumers.count > 0 ? scenarioClientProperties(s, 'consumers') : {},
    },
    notes,
  };
}
