// The headline numbers of a run, as the CLI prints them: throughput, bytes on the wire, the latency
// percentiles people quote, and how hard the load generator worked.
import {
  type ClientLoad,
  clientPaceWarning,
  diskWritesPerProduced,
  type LatencySummary,
  machineShareWarning,
  type RunSummary,
  rateShortfallWarning,
  type Scenario,
} from '@kbench/schema';
import { formatCount, formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';

const PERCENTILES: [keyof LatencySummary, string][] = [
  ['p50', 'p50'],
  ['p95', 'p95'],
  ['p99', 'p99'],
  ['p999', 'p99.9'],
  ['p9999', 'p99.99'],
  ['max', 'max'],
  ['worst10Mean', 'worst 10% mean'],
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
        <td key={key} className="num" data-testid={`${testId}-${key}`}>
          {formatMs(latency?.[key])}
        </td>
      ))}
    </tr>
  );
}

/** Cores the kbench process used and how busy its busiest load threads were, with the CLI's warning. */
function LoadGenerator({ client }: { client: ClientLoad }) {
  const busy = (v: number | null) => (v === null ? '–' : `${Math.round(v * 100)}% busy`);
  const warning = clientPaceWarning(client);
  return (
    <div className="summary-wide" data-testid="summary-client">
      <table className="table compact kv">
        <caption>Load generator (measured phase)</caption>
        <tbody>
          <tr>
            <th scope="row">CPU</th>
            <td data-testid="summary-client-cores">
              {client.cpuCores.toFixed(2)} cores (kbench process
              {client.includesBroker ? ' incl. the bundled broker' : ''})
            </td>
          </tr>
          <tr>
            <th scope="row">Producer thread</th>
            <td data-testid="summary-client-producer">{busy(client.producerBusy)}</td>
          </tr>
          <tr>
            <th scope="row">Consumer thread</th>
            <td data-testid="summary-client-consumer">{busy(client.consumerBusy)}</td>
          </tr>
        </tbody>
      </table>
      {warning && (
        <div className="warning-note" role="note" data-testid="client-pace-warning">
          Warning: {warning}
        </div>
      )}
    </div>
  );
}

/** The whole machine's CPU and the disk under the broker's data, over the measured phase. */
function Machine({
  summary,
  concurrentWith,
}: {
  summary: RunSummary;
  concurrentWith?: readonly string[] | undefined;
}) {
  const m = summary.machine;
  if (!m) return null;
  const per = diskWritesPerProduced(summary);
  const shared = machineShareWarning(summary, concurrentWith);
  return (
    <div className="summary-wide" data-testid="summary-machine">
      <table className="table compact kv">
        <caption>This machine (measured phase, everything on it)</caption>
        <tbody>
          <tr>
            <th scope="row">CPU</th>
            <td data-testid="summary-machine-cpu">
              {Math.round(m.cpuBusy * 100)}% of its {m.cores} cores busy
              {typeof m.othersCores === 'number'
                ? ` (${m.othersCores.toFixed(2)} cores of it outside kbench)`
                : ''}
            </td>
          </tr>
          <tr>
            <th scope="row">Disk writes</th>
            <td data-testid="summary-machine-disk">
              {m.disk === null || m.diskWrittenBytes === null
                ? "– (the broker's data is elsewhere, or on no single disk of this machine)"
                : `${formatCount(Math.round(m.diskWrittenBytes / (1024 * 1024)))} MB on ${m.disk}, under the broker's data${per === null ? '' : `: ${per.toFixed(2)}x the value bytes produced`}`}
            </td>
          </tr>
        </tbody>
      </table>
      {shared && (
        <div className="warning-note" role="note" data-testid="machine-share-warning">
          Warning: {shared}
        </div>
      )}
    </div>
  );
}

export function SummaryTable({
  summary,
  scenario,
  concurrentWith,
}: {
  summary: RunSummary;
  scenario?: Scenario;
  /** The other kbench runs it went on beside: their own warning says it shared the machine. */
  concurrentWith?: readonly string[] | undefined;
}) {
  const shortfall = scenario ? rateShortfallWarning(scenario, summary) : null;
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
            <th className="num">on the wire</th>
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
            <td className="num" data-testid="summary-produced-wire">
              {formatMBPerSec(summary.produced.wireMbPerSec)}
            </td>
          </tr>
          <tr data-testid="summary-consumed">
            <th scope="row">Consumed</th>
            <td className="num">{formatCount(summary.consumed.records)}</td>
            <td className="num">{formatRecordsPerSec(summary.consumed.recordsPerSec)}</td>
            <td className="num">{formatMBPerSec(summary.consumed.mbPerSec)}</td>
            <td className="num">–</td>
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
      {shortfall && (
        <div className="warning-note summary-wide" role="note" data-testid="rate-shortfall-warning">
          Warning: {shortfall}
        </div>
      )}
      {summary.client && <LoadGenerator client={summary.client} />}
      <Machine summary={summary} concurrentWith={concurrentWith} />
    </div>
  );
}
