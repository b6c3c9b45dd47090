// The record check of issue 19: what the producers had acknowledged against what is in the log. The
// native producers mark each value with their number and a per-partition sequence and keep the
// sequences acknowledged as ranges; after the measured phase the native reader reads every partition
// of the run's topics and counts lost, duplicated and reordered records (broker-native/crates/loadgen/src/verify.rs).
// Here the counts are judged against what the scenario's settings allow.
import { type NativeAcknowledged, type NativeSecurity, verifyLog } from '@kbench/broker-native';
import { type Scenario, type Verification, type VerificationCounts, whyUnmarkable } from '@kbench/schema';

export type AcknowledgedRanges = NativeAcknowledged;

/** What the run's producers had acknowledged, or why that is not known (a load agent was lost, say). */
export type Acknowledged = { ranges: AcknowledgedRanges[] } | { unknown: string };

const KINDS = ['lost', 'duplicated', 'reordered'] as const;

/**
 * Why the run's records cannot be checked (driver, value size), or null when they can. Only asked
 * of runs that want the check (faults, or verify: true).
 */
export function whyNotVerifiable(s: Scenario): string | null {
  if (s.driver !== 'native')
    return `the record check needs driver: native, whose producers mark each record (driver is ${s.driver})`;
  if (s.producers.count === 0) return 'the run has no producers';
  return whyUnmarkable(s.producers.messageSize);
}

/** The settings that allow each kind of miss, or null when none does (acks=all, min ISR ≥ 2, idempotence). */
export function allowances(s: Scenario): Verification['allows'] {
  const lost: string[] = [];
  const p = s.producers;
  if (p.acks !== 'all') lost.push(`acks=${p.acks}`);
  else if (s.topics.minInsyncReplicas < 2)
    lost.push(`acks=all with min.insync.replicas=${s.topics.minInsyncReplicas}`);
  if (String(s.topics.config['unclean.leader.election.enable']) === 'true')
    lost.push('unclean.leader.election.enable=true');
  return {
    lost: lost.length > 0 ? lost.join(' and ') : null,
    duplicated: p.idempotence ? null : 'idempotence off (a retried send can land twice)',
    reordered:
      !p.idempotence && p.maxInFlight > 1
        ? `idempotence off with maxInFlight ${p.maxInFlight} (a retried request can land after a later one)`
        : null,
  };
}

const zero = (): VerificationCounts => ({
  acknowledged: 0,
  found: 0,
  lost: 0,
  duplicated: 0,
  reordered: 0,
  unacknowledgedPresent: 0,
  foreign: 0,
});

/** The check did not run, and why (say, a run with faults on the kafkajs driver). */
export function notVerified(s: Scenario, reason: string): Verification {
  return {
    verdict: 'not-run',
    statement: `the record check did not run: ${reason}`,
    allows: allowances(s),
    totals: null,
    partitions: [],
  };
}

/** The verdict on per-partition counts under the scenario's settings. */
export function judge(s: Scenario, partitions: Verification['partitions']): Verification {
  const totals = zero();
  for (const p of partitions)
    for (const k of Object.keys(totals) as (keyof VerificationCounts)[]) totals[k] += p[k];
  const allows = allowances(s);
  const misses = KINDS.filter((k) => totals[k] > 0);
  const verdict =
    misses.length === 0 ? 'passed' : misses.every((k) => allows[k] !== null) ? 'allowed' : 'failed';
  const n = (x: number) => x.toLocaleString('en-US');
  const parts = misses.map((k) =>
    allows[k] !== null ? `${n(totals[k])} ${k}, allowed by ${allows[k]}` : `${n(totals[k])} ${k}`,
  );
  const landed =
    totals.unacknowledgedPresent > 0
      ? `; ${n(totals.unacknowledgedPresent)} unacknowledged send(s) landed (normal, not judged)`
      : '';
  let statement: string;
  if (verdict === 'passed')
    statement = `passed: all ${n(totals.acknowledged)} acknowledged records found once each, in order${landed}`;
  else if (verdict === 'allowed')
    statement = `${parts.join('; ')} (of ${n(totals.acknowledged)} acknowledged)${landed}`;
  else
    statement = `FAILED: ${parts.join('; ')} (of ${n(totals.acknowledged)} acknowledged), which the settings (acks=${s.producers.acks}, min.insync.replicas=${s.topics.minInsyncReplicas}, idempotence ${s.producers.idempotence ? 'on' : 'off'}) do not allow${landed}`;
  return { verdict, statement, allows, totals, partitions };
}

/** Reads the run's topics from the log start and judges what is there against what was acknowledged. */
export async function verifyRecords(
  s: Scenario,
  connection: { bootstrap: string[]; security?: NativeSecurity },
  topics: string[],
  acknowledged: AcknowledgedRanges[],
): Promise<Verification> {
  const read = await verifyLog({
    bootstrap: connection.bootstrap,
    topics,
    ...(connection.security ? { security: connection.security } : {}),
    acknowledged,
  });
  return judge(s, read);
}
