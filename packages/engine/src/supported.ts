// What this engine can run today. A scenario asking for more is refused up front, by field,
// rather than run as something it is not.
import {
  BUNDLED_ONLY_FAULTS,
  expandSweep,
  FAULT_ACTIONS,
  ProfileError,
  type Scenario,
  ScenarioError,
  type ScenarioIssue,
  sweepLabels,
  type TargetProfile,
  targetKind,
} from '@kbench/schema';
import { missingProgram } from './command-fault.js';
import { faultTopicIndex, parseLeaderRef } from './faults.js';
import { PAYLOAD_FILE_FIELD, PayloadFileError, readPayloadFile } from './payload.js';
import { ProfileStore } from './profiles.js';
import { targetProfile } from './target.js';

export interface SupportOptions {
  /** Where `target: <name>` profiles are looked up; default $KBENCH_HOME/profiles. */
  profiles?: ProfileStore;
  /** A rate ceiling in records/s on top of the profile's maxRate (the CLI's --max-rate). */
  maxRate?: number;
}

/** The rate ceiling in force for a scenario: the lower of the profile's maxRate and `maxRate`. */
export function rateCeiling(profile: TargetProfile | undefined, maxRate?: number): number | undefined {
  const limits = [profile?.maxRate, maxRate].filter((v): v is number => v !== undefined);
  return limits.length > 0 ? Math.min(...limits) : undefined;
}

/** The node and cluster faults the managed Apache Kafka target takes (besides command). */
const KAFKA_FAULTS = FAULT_ACTIONS.filter((a) => !(BUNDLED_ONLY_FAULTS as readonly string[]).includes(a));

export function unsupportedIssues(s: Scenario, options: SupportOptions = {}): ScenarioIssue[] {
  const issues: ScenarioIssue[] = [];
  const not = (path: string, message: string) => issues.push({ path, message });
  const kind = targetKind(s.target);
  let profile: TargetProfile | undefined;
  try {
    profile = targetProfile(s.target, options.profiles ?? new ProfileStore());
  } catch (err) {
    if (err instanceof ScenarioError) issues.push(...err.issues);
    else if (err instanceof ProfileError) not('target', err.message.replace(/\n\s*/g, ' '));
    else throw err;
  }
  if (kind === 'kafka' && s.cluster.fsync !== 'none')
    not(
      'cluster.fsync',
      'the kafka target runs Kafka as it ships (page cache, no fsync); fsync policies are for the bundled broker',
    );
  if (kind === 'bundled') {
    if (s.topics.replicationFactor > s.cluster.nodes)
      not(
        'topics.replicationFactor',
        `must not exceed cluster.nodes (${s.cluster.nodes}) on the bundled target`,
      );
    if (s.topics.minInsyncReplicas > s.cluster.nodes)
      not(
        'topics.minInsyncReplicas',
        `must not exceed cluster.nodes (${s.cluster.nodes}) on the bundled target`,
      );
  }
  const ceiling = rateCeiling(profile, options.maxRate);
  if (ceiling !== undefined && typeof s.producers.rate === 'number' && s.producers.rate > ceiling) {
    const from = [
      profile?.maxRate !== undefined ? `profile ${JSON.stringify(profile.name)} maxRate` : '',
      options.maxRate !== undefined ? '--max-rate' : '',
    ]
      .filter(Boolean)
      .join(' and ');
    not(
      'producers.rate',
      `${s.producers.rate} records/s is above the rate ceiling of ${ceiling} records/s (${from}); lower it, or use max or find-max, which are capped at the ceiling`,
    );
  }
  if (s.producers.rate === 'find-max' && s.producers.count === 0) {
    not('producers.rate', 'find-max needs at least one producer');
  }
  if (s.driver === 'kafkajs' && !['none', 'gzip'].includes(s.producers.compression)) {
    not(
      'producers.compression',
      'the kafkajs driver supports none and gzip; the native driver supports all codecs',
    );
  }
  if (s.driver === 'kafkajs' && s.producers.count > 0 && s.producers.lingerMs > 0) {
    not(
      'producers.lingerMs',
      `the kafkajs driver does not linger: it sends each batch as soon as it is full (got ${s.producers.lingerMs}); set 0, or use driver: native, which honours it`,
    );
  }
  const size = s.producers.messageSize;
  if (typeof size === 'object' && 'payloadFile' in size) {
    try {
      readPayloadFile(size.payloadFile);
    } catch (err) {
      if (!(err instanceof PayloadFileError)) throw err;
      not(PAYLOAD_FILE_FIELD, err.problem);
    }
  }
  if (s.driver === 'native' && s.producers.idempotence && s.producers.acks !== 'all') {
    not(
      'producers.idempotence',
      'an idempotent producer needs producers.acks all (as the Java client requires)',
    );
  }
  s.faults.forEach((f, i) => {
    if (f.action !== 'command' || f.run === undefined) return;
    const missing = missingProgram(f.run);
    if (missing) not(`faults[${i}].run`, missing);
  });
  if (s.faults.some((f) => f.action !== 'command') && kind !== 'bundled' && kind !== 'kafka') {
    not(
      'faults',
      `${FAULT_ACTIONS.join(', ')} faults need target bundled or kafka: kbench can only act on nodes it started itself (target is ${s.target}); a command fault runs on any target`,
    );
  } else {
    s.faults.forEach((f, i) => {
      if (kind === 'kafka' && (BUNDLED_ONLY_FAULTS as readonly string[]).includes(f.action))
        not(
          `faults[${i}].action`,
          `${f.action} needs target bundled: only the bundled cluster, which runs in kbench's process, takes ${BUNDLED_ONLY_FAULTS.join(', ')}; the kafka target takes ${KAFKA_FAULTS.join(', ')} and command`,
        );
    });
    s.faults.forEach((f, i) => {
      const leader = parseLeaderRef(f.node);
      if (typeof f.node === 'number' && f.node > s.cluster.nodes)
        not(`faults[${i}].node`, `node ${f.node} does not exist: cluster.nodes is ${s.cluster.nodes}`);
      if (leader && faultTopicIndex(leader.topic, s) === null)
        not(
          `faults[${i}].node`,
          `leader:<topic>-<partition> names a topic of the run by its index n (0 to ${s.topics.count - 1}) or as ${s.topics.prefix}-<n> (got ${JSON.stringify(leader.topic)})`,
        );
      else if (leader && leader.partition >= s.topics.partitions)
        not(
          `faults[${i}].node`,
          `partition ${leader.partition} does not exist: topics.partitions is ${s.topics.partitions}`,
        );
    });
  }
  return issues;
}

export function assertSupported(s: Scenario, options: SupportOptions = {}): void {
  const issues = unsupportedIssues(s, options);
  if (issues.length > 0) throw new ScenarioError(issues, 'not supported');
}

/** A scenario's runs (one, or one per sweep value) split into those this engine can run and why the others cannot. */
export interface RunnablePlans {
  runnable: { plan: Scenario; value: string | undefined }[];
  /** `needs <field>: <reason>`, prefixed with `<knob>=<value>: ` for a sweep's value. */
  notRun: string[];
}

export function runnablePlans(scenario: Scenario, options: SupportOptions = {}): RunnablePlans {
  const labels = sweepLabels(scenario);
  const out: RunnablePlans = { runnable: [], notRun: [] };
  expandSweep(scenario).forEach((plan, i) => {
    const issues = unsupportedIssues(plan, options);
    const value = labels[i];
    if (issues.length === 0) out.runnable.push({ plan, value });
    else {
      const reasons = issues.map((x) => `needs ${x.path}: ${x.message}`).join('; ');
      out.notRun.push(value === undefined ? reasons : `${scenario.sweep?.knob}=${value}: ${reasons}`);
    }
  });
  return out;
}
