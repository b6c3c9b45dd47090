// The faults a run executed, at their time since load began, as `kbench show` lists them, with what
// each cost (docs/scenarios.md#recovery-figures) when the run measured it.
import { commandOutputText, type FaultEvent, type FaultRecovery, faultText } from '@kbench/schema';

const sec = (v: number | null) => (v === null ? '–' : `${(Math.round(v * 10) / 10).toFixed(1)} s`);
const ms = (v: number | null) => (v === null ? '–' : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`);
/** Worst latency of the window: p99 / max. */
const worst = (p99: number | null, max: number | null) => (p99 === null ? '–' : `${ms(p99)} / ${ms(max)}`);

function RecoveryCells({ r }: { r: FaultRecovery | undefined }) {
  if (!r) return <td colSpan={7} className="muted" />;
  return (
    <>
      <td className="num" data-testid="fault-no-ack">
        {sec(r.noAckSec)}
      </td>
      <td
        className="num"
        data-testid="fault-recovered"
        title={r.recoveryNote ?? `back to 90% of ${r.levelPerSec} rec/s`}
      >
        {r.recoverySec === null ? 'not back' : sec(r.recoverySec)}
      </td>
      <td className="num">{worst(r.publishP99Ms, r.publishMaxMs)}</td>
      <td className="num">{worst(r.e2eP99Ms, r.e2eMaxMs)}</td>
      <td className="num">{r.errors}</td>
      <td className="num">{r.retries ?? '–'}</td>
      <td className="num" data-testid="fault-leader" title={r.leaderNote ?? undefined}>
        {r.leaderElectionMs === null ? '–' : ms(r.leaderElectionMs)}
      </td>
    </>
  );
}

export function FaultsTable({ faults }: { faults: FaultEvent[] }) {
  const measured = faults.some((f) => f.recovery);
  return (
    <table className="table compact" data-testid="faults">
      <caption>Faults executed{measured ? ' and what each cost' : ''}</caption>
      <thead>
        <tr>
          <th className="num">at</th>
          <th>fault</th>
          {measured && (
            <>
              <th
                className="num"
                title="The longest run of samples with no record acknowledged, from the fault on"
              >
                without acks
              </th>
              <th
                className="num"
                title="Until acked throughput was back to 90% of its level before the fault, for 1 s"
              >
                back after
              </th>
              <th className="num" title="Worst publish latency in the fault's window: p99 / max">
                publish p99 / max
              </th>
              <th className="num" title="Worst end-to-end latency in the fault's window: p99 / max">
                e2e p99 / max
              </th>
              <th className="num" title="Errors the clients counted in the fault's window">
                errors
              </th>
              <th
                className="num"
                title="Records the producers sent again in the fault's window (native driver)"
              >
                retried
              </th>
              <th className="num" title="Until every partition the node led had a new leader">
                new leader
              </th>
            </>
          )}
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
            {measured && <RecoveryCells r={fault.recovery} />}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
