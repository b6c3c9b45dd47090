// OpenMessaging Benchmark interop, export side: a stored run as OMB's result JSON (the fields of
// its TestResult class), so OMB's charting scripts can plot kbench runs beside OMB runs.
import { type LatencySummary, meanMessageSize, type RunRecord, type Sample } from '@kbench/schema';

type Series = number[];

/** The TestResult fields kbench can fill. Per-sample lists hold one value per kbench sample (1 s). */
export interface OmbTestResult {
  workload: string;
  driver: string;
  messageSize: number;
  topics: number;
  partitions: number;
  producersPerTopic: number;
  consumersPerTopic: number;
  publishRate: Series;
  publishErrorRate: Series;
  consumeRate: Series;
  backlog: Series;
  publishLatencyAvg: Series;
  publishLatency50pct: Series;
  publishLatency75pct: Series;
  publishLatency95pct: Series;
  publishLatency99pct: Series;
  publishLatency999pct: Series;
  publishLatency9999pct: Series;
  publishLatencyMax: Series;
  aggregatedPublishLatencyAvg: number;
  aggregatedPublishLatency50pct: number;
  aggregatedPublishLatency75pct: number;
  aggregatedPublishLatency95pct: number;
  aggregatedPublishLatency99pct: number;
  aggregatedPublishLatency999pct: number;
  aggregatedPublishLatency9999pct: number;
  aggregatedPublishLatencyMax: number;
  aggregatedPublishLatencyQuantiles: Record<string, number>;
  endToEndLatencyAvg: Series;
  endToEndLatency50pct: Series;
  endToEndLatency75pct: Series;
  endToEndLatency95pct: Series;
  endToEndLatency99pct: Series;
  endToEndLatency999pct: Series;
  endToEndLatency9999pct: Series;
  endToEndLatencyMax: Series;
  aggregatedEndToEndLatencyAvg: number;
  aggregatedEndToEndLatency50pct: number;
  aggregatedEndToEndLatency75pct: number;
  aggregatedEndToEndLatency95pct: number;
  aggregatedEndToEndLatency99pct: number;
  aggregatedEndToEndLatency999pct: number;
  aggregatedEndToEndLatency9999pct: number;
  aggregatedEndToEndLatencyMax: number;
  aggregatedEndToEndLatencyQuantiles: Record<string, number>;
}

const QUANTILES: [string, keyof LatencySummary][] = [
  ['50.0', 'p50'],
  ['75.0', 'p75'],
  ['95.0', 'p95'],
  ['99.0', 'p99'],
  ['99.9', 'p999'],
  ['99.99', 'p9999'],
  ['100.0', 'max'],
];

function aggregated(l: LatencySummary | null) {
  const v = (k: keyof LatencySummary) => l?.[k] ?? 0;
  return {
    avg: v('mean'),
    p50: v('p50'),
    p75: v('p75'),
    p95: v('p95'),
    p99: v('p99'),
    p999: v('p999'),
    p9999: v('p9999'),
    max: v('max'),
    quantiles: l ? Object.fromEntries(QUANTILES.map(([q, k]) => [q, v(k)])) : {},
  };
}

/**
 * OMB's TestResult for a run: per-interval series from the measured samples (warm-up left out, as
 * OMB leaves out its warm-up) and the aggregated figures from the summary. kbench samples keep
 * p50, p99 and max per second only, so the other per-interval percentile lists stay empty.
 */
export function runToOmbResult(run: RunRecord, samples: Sample[]): OmbTestResult {
  const s = run.scenario;
  const measured = samples.filter((x) => !x.warmup && x.intervalMs > 0);
  const perSec = (f: (x: Sample) => number) => measured.map((x) => (f(x) * 1000) / x.intervalMs);
  const each = (f: (x: Sample) => number | null) => measured.map(f).filter((v): v is number => v !== null);
  const size = s.producers.messageSize;
  const publish = aggregated(run.summary?.publishLatencyMs ?? null);
  const e2e = aggregated(run.summary?.endToEndLatencyMs ?? null);
  const consumers = s.consumers.count > 0 ? s.consumers.count * s.consumers.groups : 0;
  return {
    workload: s.name,
    driver: `kbench ${run.environment.driver} -> ${run.environment.target}`,
    messageSize: Math.round(meanMessageSize(size) ?? measuredMeanSize(samples)),
    topics: s.topics.count,
    partitions: s.topics.partitions,
    producersPerTopic: s.producers.count / s.topics.count,
    consumersPerTopic: consumers / s.topics.count,
    publishRate: perSec((x) => x.producedRecords),
    publishErrorRate: perSec((x) => x.errors),
    consumeRate: perSec((x) => x.consumedRecords),
    backlog: measured.map((x) => x.backlog),
    publishLatencyAvg: [],
    publishLatency50pct: each((x) => x.publishP50Ms),
    publishLatency75pct: [],
    publishLatency95pct: [],
    publishLatency99pct: each((x) => x.publishP99Ms),
    publishLatency999pct: [],
    publishLatency9999pct: [],
    publishLatencyMax: each((x) => x.publishMaxMs),
    aggregatedPublishLatencyAvg: publish.avg,
    aggregatedPublishLatency50pct: publish.p50,
    aggregatedPublishLatency75pct: publish.p75,
    aggregatedPublishLatency95pct: publish.p95,
    aggregatedPublishLatency99pct: publish.p99,
    aggregatedPublishLatency999pct: publish.p999,
    aggregatedPublishLatency9999pct: publish.p9999,
    aggregatedPublishLatencyMax: publish.max,
    aggregatedPublishLatencyQuantiles: publish.quantiles,
    endToEndLatencyAvg: [],
    endToEndLatency50pct: each((x) => x.e2eP50Ms),
    endToEndLatency75pct: [],
    endToEndLatency95pct: [],
    endToEndLatency99pct: each((x) => x.e2eP99Ms),
    endToEndLatency999pct: [],
    endToEndLatency9999pct: [],
    endToEndLatencyMax: each((x) => x.e2eMaxMs),
    aggregatedEndToEndLatencyAvg: e2e.avg,
    aggregatedEndToEndLatency50pct: e2e.p50,
    aggregatedEndToEndLatency75pct: e2e.p75,
    aggregatedEndToEndLatency95pct: e2e.p95,
    aggregatedEndToEndLatency99pct: e2e.p99,
    aggregatedEndToEndLatency999pct: e2e.p999,
    aggregatedEndToEndLatency9999pct: e2e.p9999,
    aggregatedEndToEndLatencyMax: e2e.max,
    aggregatedEndToEndLatencyQuantiles: e2e.quantiles,
  };
}

/** Mean value bytes per record over the samples (for payload files, whose size the scenario does not say). */
function measuredMeanSize(samples: Sample[]): number {
  const records = samples.reduce((n, x) => n + x.producedRecords, 0);
  return records > 0 ? samples.reduce((n, x) => n + x.producedBytes, 0) / records : 0;
}
