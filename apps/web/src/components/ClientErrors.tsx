// The measured phase's client errors on the run page: how many, and what they said, most frequent
// first (summary.clientErrors, docs/scenarios.md#client-errors). Runs stored before the messages were
// kept show the count alone.
import type { RunSummary } from '@kbench/schema';

const n = (x: number) => x.toLocaleString('en-US');

export function ClientErrors({ summary }: { summary: RunSummary }) {
  if (summary.produced.errors === 0) return null;
  const said = summary.clientErrors ?? [];
  return (
    <div className="warning-note" role="note" data-testid="client-errors">
      <strong>Client errors in the measured phase: {n(summary.produced.errors)}</strong>
      {said.length > 0 ? (
        <table className="table compact">
          <thead>
            <tr>
              <th>client</th>
              <th className="num">errors</th>
              <th>message</th>
            </tr>
          </thead>
          <tbody>
            {said.map((e) => (
              <tr key={`${e.role}:${e.message}`}>
                <td>{e.role}</td>
                <td className="num">{n(e.count)}</td>
                <td>
                  <code>{e.message}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <span className="muted"> (this run was stored before kbench kept what the errors said)</span>
      )}
    </div>
  );
}
