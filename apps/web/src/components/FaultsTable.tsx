// The faults a run executed, at their time since load began, as `kbench show` lists them.
import { commandOutputText, type FaultEvent, faultText } from '@kbench/schema';

export function FaultsTable({ faults }: { faults: FaultEvent[] }) {
  return (
    <table className="table compact" data-testid="faults">
      <caption>Faults executed</caption>
      <thead>
        <tr>
          <th className="num">at</th>
          <th>fault</th>
        </tr>
      </thead>
      <tbody>
        {faults.map((fault) => (
          <tr
            key={`${fault.t}-${fault.action}-${fault.target}`}
            data-testid="fault-row"
            className={fault.error ? 'danger-text' : undefined}
          >
            <td className="num">{fault.t.toFixed(1)} s</td>
            <td>
              {faultText(fault)}
              {commandOutputText(fault) && (
                <details data-testid="fault-output">
                  <summary>output</summary>
                  <pre>{commandOutputText(fault)}</pre>
                </details>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
