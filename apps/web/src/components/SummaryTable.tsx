// The headline numbers of a run: throughput and the latency percentiles people quote.
import type { LatencySummary, RunSummary } from '@kbench/schema';
import { formatCount, formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';

const PERCENTILES: [keyof LatencySummary, string][] = [
  ['p50', 'p50'],
  ['p99', 'p99'],
  ['p999', 'p99.9'],
  ['max', 'max'],
];

function LatencyRow({
  label,
  latency,
  testId,
}: {
  label: string;
  latency: LatencySummary | null;
  testId: string;
}) {
  return (
    <tr data-testid={testId}>
      <th scope="row">{label}</th>
      {PERCENTILES.map(([key]) => (
        <td key={key} className="num">
          {formatMs(latency?.[key])}
        </td>
      ))}
    </tr>
  );
}

export function SummaryTable({ summary }: { summary: RunSummary }) {
  return (
    <div className="summary" data-testid="summary">
      <table className="table compact">
        <caption>Throughput (measured {summary.measuredSeconds.toFixed(0)} s, warm-up excluded)</caption>
        <thead>
          <tr>
            <th />
            <th className="num">records</th>
            <th className="num">rate</th>
            <th className="num">value bytes</th>
          </tr>
        </thead>
        <tbody>
          <tr data-testid="summary-produced">
            <th scope="row">Produced</th>
            <td className="num">{formatCount(summary.produced.records)}</td>
            <td className="num" data-testid="summary-produced-rate">
              {formatRecordsPerSec(summary.produced.recordsPerSec)}
            </td>
            <td className="num">{formatMBPerSec(summary.produced.mbPerSec)}</td>
          </tr>
          <tr data-testid="summary-consumed">
            <th scope="row">Consumed</th>
            <td className="num">{formatCount(summary.consumed.records)}</td>
            <td className="num">{formatRecordsPerSec(summary.consumed.recordsPerSec)}</td>
            <td className="num">{formatMBPerSec(summary.consumed.mbPerSec)}</td>
          </tr>
        </tbody>
      </table>
      <table className="table compact">
        <caption>Latency</caption>
        <thead>
          <tr>
            <th />
            {PERCENTILES.map(([key, label]) => (
              <th key={key} className="num">
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <LatencyRow
            label="Publish (send → ack)"
            latency={summary.publishLatencyMs}
            testId="summary-publish"
          />
          <LatencyRow
            label="End to end (send → receive)"
            latency={summary.endToEndLatencyMs}
            testId="summary-e2e"
          />
        </tbody>
      </table>
    </div>
  );
}
