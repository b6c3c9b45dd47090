// The record check of a run (docs/scenarios.md#record-check-verify): the verdict in a line, loud when
// it failed, and the partitions whose acknowledged records were lost, duplicated or reordered.
import type { Verification } from '@kbench/schema';

const n = (x: number) => x.toLocaleString('en-US');

export function VerificationPanel({ verification: v }: { verification: Verification }) {
  const missed = v.partitions.filter((p) => p.lost + p.duplicated + p.reordered > 0);
  const failed = v.verdict === 'failed';
  return (
    <div
      className={failed ? 'error' : 'warning-note'}
      role={failed ? 'alert' : 'note'}
      data-testid="verification"
      data-verdict={v.verdict}
    >
      <strong>{failed ? 'Record check FAILED' : 'Record check'}</strong>{' '}
      {failed ? v.statement.replace(/^FAILED: /, '') : v.statement}
      {missed.length > 0 && (
        <table className="table compact">
          <thead>
            <tr>
              <th>partition</th>
              <th className="num">acknowledged</th>
              <th className="num">lost</th>
              <th className="num">duplicated</th>
              <th className="num">reordered</th>
              <th className="num">unacknowledged present</th>
            </tr>
          </thead>
          <tbody>
            {missed.map((p) => (
              <tr key={`${p.topic}:${p.partition}`}>
                <td>
                  <code>
                    {p.topic}:{p.partition}
                  </code>
                </td>
                <td className="num">{n(p.acknowledged)}</td>
                <td className="num">{n(p.lost)}</td>
                <td className="num">{n(p.duplicated)}</td>
                <td className="num">{n(p.reordered)}</td>
                <td className="num">{n(p.unacknowledgedPresent)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
