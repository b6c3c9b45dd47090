// Parsers for the summaries that ProducerPerformance and ConsumerPerformance print on stdout.

export interface ProducerPerformanceSummary {
  records: number;
  recordsPerSec: number;
  /** Value bytes per second, in MiB (the tool's "MB/sec"). */
  mbPerSec: number;
  avgLatencyMs: number;
  maxLatencyMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  p999Ms: number;
  /**
   * With --warmup-records: the same figures over the records after the warm-up only (the tool's
   * "steady state records sent" line).
   */
  steadyState?: Omit<ProducerPerformanceSummary, 'steadyState'>;
}

export interface ConsumerPerformanceSummary {
  startTime: string;
  endTime: string;
  /** MiB of record values consumed. */
  mb: number;
  mbPerSec: number;
  messages: number;
  messagesPerSec: number;
  rebalanceTimeMs: number;
  fetchTimeMs: number;
  fetchMbPerSec: number;
  fetchMessagesPerSec: number;
}

const NUMBER = String.raw`(-?[\d.]+(?:[eE][-+]?\d+)?|NaN|-?Infinity)`;
// The final line; the periodic progress lines stop after "max latency." and have no percentiles.
const PRODUCER_SUMMARY = new RegExp(
  String.raw`^(\d+) (steady state )?records sent, ${NUMBER} records/sec \(${NUMBER} MB/sec\), ${NUMBER} ms avg latency, ` +
    String.raw`${NUMBER} ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.\s*$`,
);

/** The final summary line of org.apache.kafka.tools.ProducerPerformance, or undefined if there is none. */
export function parseProducerPerformance(stdout: string): ProducerPerformanceSummary | undefined {
  let summary: ProducerPerformanceSummary | undefined;
  for (const line of stdout.split('\n')) {
    const match = PRODUCER_SUMMARY.exec(line.trim());
    if (!match) continue;
    const steady = match[2] !== undefined;
    const [records, recordsPerSec, mbPerSec, avg, max, p50, p95, p99, p999] = [
      match[1],
      ...match.slice(3),
    ].map(Number) as [number, number, number, number, number, number, number, number, number];
    const figures = {
      records,
      recordsPerSec,
      mbPerSec,
      avgLatencyMs: avg,
      maxLatencyMs: max,
      p50Ms: p50,
      p95Ms: p95,
      p99Ms: p99,
      p999Ms: p999,
    };
    if (!steady) summary = figures;
    else if (summary !== undefined) summary = { ...summary, steadyState: figures };
  }
  return summary;
}

const CONSUMER_COLUMNS = {
  'start.time': 'startTime',
  'end.time': 'endTime',
  'data.consumed.in.MB': 'mb',
  'MB.sec': 'mbPerSec',
  'data.consumed.in.nMsg': 'messages',
  'nMsg.sec': 'messagesPerSec',
  'rebalance.time.ms': 'rebalanceTimeMs',
  'fetch.time.ms': 'fetchTimeMs',
  'fetch.MB.sec': 'fetchMbPerSec',
  'fetch.nMsg.sec': 'fetchMessagesPerSec',
} as const;

/** The header and the one result line of org.apache.kafka.tools.ConsumerPerformance (without --show-detailed-stats). */
export function parseConsumerPerformance(stdout: string): ConsumerPerformanceSummary | undefined {
  const lines = stdout.split('\n').map((line) => line.trim());
  const headerAt = lines.findIndex((line) => line.startsWith('start.time,'));
  const values = lines[headerAt + 1];
  if (headerAt < 0 || values === undefined) return undefined;
  const names = lines[headerAt]!.split(',').map((name) => name.trim());
  const cells = values.split(',').map((cell) => cell.trim());
  if (cells.length !== names.length) return undefined;
  const summary: Record<string, string | number> = {};
  names.forEach((name, i) => {
    const key = CONSUMER_COLUMNS[name as keyof typeof CONSUMER_COLUMNS];
    if (key === undefined) return;
    const cell = cells[i]!;
    summary[key] = key === 'startTime' || key === 'endTime' ? cell : Number(cell);
  });
  for (const key of Object.values(CONSUMER_COLUMNS)) if (!(key in summary)) return undefined;
  if (typeof summary.messages !== 'number' || Number.isNaN(summary.messages)) return undefined;
  return summary as unknown as ConsumerPerformanceSummary;
}
