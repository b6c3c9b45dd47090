// The load agents a run's clients ran on: what each ran, its clock against the controller's, what it
// did in the measured phase, and when it was lost, as `kbench show` lists them.
import { type AgentsRun, agentLossWarning } from '@kbench/schema';
import { formatCount, formatMs, formatRecordsPerSec } from '../format';

const fixed = (ms: number, digits: number) => `${ms.toFixed(digits)} ms`;

export function AgentsTable({ agents }: { agents: AgentsRun }) {
  const warning = agentLossWarning(agents);
  return (
    <div data-testid="agents">
      <table className="table compact">
        <caption>
          Load agents · end-to-end latency is right to within{' '}
          <span data-testid="agents-e2e-uncertainty">{fixed(agents.e2eClockUncertaintyMs, 2)}</span> of clock
          uncertainty · on loss: {agents.onLoss}
        </caption>
        <thead>
          <tr>
            <th>agent</th>
            <th>host</th>
            <th className="num">producers</th>
            <th className="num">consumers</th>
            <th className="num">clock offset</th>
            <th className="num">produced</th>
            <th className="num">publish p99</th>
            <th className="num">consumed</th>
            <th className="num">e2e p99</th>
            <th>lost</th>
          </tr>
        </thead>
        <tbody>
          {agents.agents.map((a) => (
            <tr
              key={a.address}
              data-testid="agent-row"
              className={a.lostAtMs !== null ? 'danger-text' : undefined}
            >
              <td>
                {a.name} <span className="muted">{a.address}</span>
              </td>
              <td>
                {a.host}
                {a.cores > 0 ? <span className="muted"> · {a.cores} cores</span> : null}
              </td>
              <td className="num">{a.producers}</td>
              <td className="num">{a.consumers}</td>
              <td className="num">
                {fixed(a.clockOffsetMs, 1)} ± {fixed(a.clockUncertaintyMs, 2)}
              </td>
              <td className="num">
                {formatCount(a.produced.records)} · {formatRecordsPerSec(a.produced.recordsPerSec)}
              </td>
              <td className="num">{formatMs(a.produced.latencyMs?.p99)}</td>
              <td className="num">
                {formatCount(a.consumed.records)} · {formatRecordsPerSec(a.consumed.recordsPerSec)}
              </td>
              <td className="num">{formatMs(a.consumed.latencyMs?.p99)}</td>
              <td>
                {a.lostAtMs === null ? '–' : `at ${(a.lostAtMs / 1000).toFixed(1)} s: ${a.lostReason ?? ''}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {warning && (
        <div className="warning-note" role="note" data-testid="agents-loss-warning">
          Warning: {warning}
        </div>
      )}
    </div>
  );
}
