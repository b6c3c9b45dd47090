// What this engine can run today. A scenario asking for more is refused up front, by field,
// rather than run as something it is not.
import { type Scenario, ScenarioError, type ScenarioIssue } from '@kbench/schema';

const BOOTSTRAP = /^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/;

export function unsupportedIssues(s: Scenario): ScenarioIssue[] {
  const issues: ScenarioIssue[] = [];
  const not = (path: string, message: string) => issues.push({ path, message });
  if (s.target !== 'bundled' && s.target !== 'kafka' && !BOOTSTRAP.test(s.target)) {
    not(
      'target',
      `must be bundled, kafka (a managed Apache Kafka on this machine) or bootstrap servers host:port[,host:port] (got ${JSON.stringify(s.target)}); named profiles are not available yet`,
    );
  }
  if (s.cluster.nodes !== 1)
    not('cluster.nodes', 'the bundled and kafka targets run a single node in this version');
  if (s.cluster.fsync !== 'none') not('cluster.fsync', 'only none (page cache) is available in this version');
  if (s.producers.rate === 'find-max' && s.producers.count === 0) {
    not('producers.rate', 'find-max needs at least one producer');
  }
  if (s.driver === 'kafkajs' && !['none', 'gzip'].includes(s.producers.compression)) {
    not(
      'producers.compression',
      'the kafkajs driver supports none and gzip; the native driver supports all codecs',
    );
  }
  if (s.driver === 'native' && s.producers.idempotence && s.producers.acks !== 'all') {
    not(
      'producers.idempotence',
      'an idempotent producer needs producers.acks all (as the Java client requires)',
    );
  }
  if (s.faults.length > 0) not('faults', 'fault injection needs the multi-node cluster, not available yet');
  return issues;
}

export function assertSupported(s: Scenario): void {
  const issues = unsupportedIssues(s);
  if (issues.length > 0) throw new ScenarioError(issues, 'not supported');
}
