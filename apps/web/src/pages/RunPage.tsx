// One stored run: summary, every chart, the scenario as YAML, the environment, the CSV.
import { faultMarks } from '@kbench/charts';
import { scenarioToYaml } from '@kbench/schema';
import { useEffect, useMemo, useState } from 'react';
import { api, type RunRecord, type Sample } from '../api';
import { AgentsTable } from '../components/AgentsTable';
import { ConcurrentWarning, ErrorNote, Panel, StatusBadge } from '../components/bits';
import { ClientErrors } from '../components/ClientErrors';
import { FaultsTable } from '../components/FaultsTable';
import { LatencyHeatmaps } from '../components/LatencyHeatmaps';
import { RunCharts } from '../components/RunCharts';
import { SummaryTable } from '../components/SummaryTable';
import { VerificationPanel } from '../components/VerificationPanel';
import { formatBytes, formatDateTime, runLength } from '../format';
import { href, navigate } from '../router';

function EnvironmentTable({ record }: { record: RunRecord }) {
  const env = record.environment;
  const rows: [string, string][] = [
    [
      'Target',
      env.bootstrap && env.bootstrap !== env.target ? `${env.target} (${env.bootstrap})` : env.target,
    ],
    // How the clients connected (a profile's TLS and SASL, or the bundled listener's cluster.security).
    ...(env.profile ? ([['Profile', env.profile]] as [string, string][]) : []),
    ...(env.security ? ([['Security', env.security]] as [string, string][]) : []),
    ['Driver', env.driver],
    ['CPU', `${env.cores} cores${env.cpuModel ? `, ${env.cpuModel}` : ''}`],
    ['Memory', `${formatBytes(env.memoryBytes)}${env.memoryNote ? `; ${env.memoryNote}` : ''}`],
    ['OS', env.os],
    ['Host', env.hostname],
    ...Object.entries(env.versions ?? {}).map(([k, v]): [string, string] => [`${k} version`, v]),
    // The Kafka client properties each role's driver ran with, defaults included.
    ...(['producers', 'consumers'] as const)
      .filter((role) => Object.keys(env.clientProperties?.[role] ?? {}).length > 0)
      .map((role): [string, string] => [
        `${role === 'producers' ? 'Producer' : 'Consumer'} properties`,
        Object.entries(env.clientProperties?.[role] ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(' '),
      ]),
    // The profile's metrics endpoints, as the run read them (docs/targets.md).
    ...(env.metrics && env.metrics.length > 0
      ? ([
          [
            'Metrics endpoints',
            env.metrics
              .map(
                (m) =>
                  `${m.name} (${m.kind ?? 'unknown kind'}): ${m.scrapes} scrapes, ${m.failed} failed${m.lastError ? ` (${m.lastError})` : ''}`,
              )
              .join('; '),
          ],
        ] as [string, string][])
      : []),
  ];
  return (
    <table className="table compact kv" data-testid="environment">
      <tbody>
        {rows.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td>{v || '–'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Tags (comma-separated) and free notes, saved to the history when the field loses focus. */
function RunLabels({ record, onChange }: { record: RunRecord; onChange: (r: RunRecord) => void }) {
  const [tags, setTags] = useState(record.tags.join(', '));
  const [notes, setNotes] = useState(record.notes);
  const [error, setError] = useState<Error | null>(null);
  const save = (change: { tags?: string[]; notes?: string }) =>
    api.updateRun(record.id, change).then((r) => {
      setError(null);
      onChange(r);
    }, setError);
  return (
    <div className="labels" data-testid="run-labels">
      <label>
        Tags
        <input
          value={tags}
          placeholder="baseline, acks=all"
          onChange={(e) => setTags(e.target.value)}
          onBlur={() =>
            save({
              tags: tags
                .split(',')
                .map((t) => t.trim())
                .filter(Boolean),
            })
          }
          data-testid="run-tags"
        />
      </label>
      <label>
        Notes
        <input
          value={notes}
          placeholder="What changed, what to look at"
          onChange={(e) => setNotes(e.target.value)}
          onBlur={() => save({ notes })}
          data-testid="run-notes"
        />
      </label>
      {error && <span className="field-error">{error.message}</span>}
    </div>
  );
}

export function RunPage({ id }: { id: string }) {
  const [record, setRecord] = useState<RunRecord | null>(null);
  const [samples, setSamples] = useState<Sample[] | null>(null);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    setRecord(null);
    setSamples(null);
    api.run(id).then(setRecord, setError);
    api.samples(id).then(setSamples, setError);
  }, [id]);

  const remove = async () => {
    if (!record || !window.confirm(`Delete run ${record.id} (${record.scenario.name}) and its samples?`))
      return;
    try {
      await api.deleteRun(record.id);
      navigate(href.history);
    } catch (err) {
      setError(err as Error);
    }
  };

  const marks = useMemo(() => (record ? faultMarks(record) : []), [record]);
  if (error) return <ErrorNote error={error} />;
  if (!record) return <p className="muted">Loading run…</p>;

  return (
    <div data-testid="run-page">
      <div className="page-head">
        <div>
          <div className="crumbs">
            <a href={href.history}>History</a> / run <code>{record.id}</code>
          </div>
          <h1>
            {record.scenario.name} <StatusBadge status={record.status} />
          </h1>
          <p className="muted">
            Started {formatDateTime(record.startedAt)} · ran {runLength(record.startedAt, record.finishedAt)}
            {record.source ? ` · from ${record.source}` : ''}
          </p>
        </div>
        <div className="actions">
          {record.status === 'running' && (
            <a className="btn primary" href={href.live(record.id)}>
              Watch live
            </a>
          )}
          {record.status === 'completed' && (
            <a
              className="btn"
              href={href.trend(record.scenario.name, record.scenario.target, record.sweepValue)}
              title="Every completed run of this scenario on this target, over time"
              data-testid="trend-link"
            >
              Trend on this target
            </a>
          )}
          <a
            className="btn"
            href={api.csvUrl(record.id)}
            download={`kbench-${record.id}.csv`}
            data-testid="csv-link"
          >
            ⬇ Samples CSV
          </a>
          {record.status !== 'running' && (
            <>
              <a
                className="btn"
                href={api.hlogUrl(record.id)}
                download={`kbench-${record.id}.hlog`}
                title="Each sample's latency histograms as an HdrHistogram interval log (HistogramLogAnalyzer)"
                data-testid="hlog-link"
              >
                ⬇ .hlog
              </a>
              <a
                className="btn"
                href={api.histogramsJsonUrl(record.id)}
                download={`kbench-${record.id}-histograms.json`}
                title="Each sample's latency histograms as raw buckets"
                data-testid="histograms-json-link"
              >
                ⬇ Histograms JSON
              </a>
            </>
          )}
          <button
            type="button"
            className="btn ghost danger-text"
            onClick={remove}
            disabled={record.status === 'running'}
          >
            Delete
          </button>
        </div>
      </div>
      {record.concurrentWith && <ConcurrentWarning others={record.concurrentWith} />}
      <RunLabels record={record} onChange={setRecord} />
      {record.error && <ErrorNote error={record.error} />}
      {record.summary ? (
        <SummaryTable
          summary={record.summary}
          scenario={record.scenario}
          concurrentWith={record.concurrentWith}
        />
      ) : (
        <p className="muted">No summary: the run did not reach its measured phase.</p>
      )}
      {record.summary && <ClientErrors summary={record.summary} />}
      {record.summary?.verification && <VerificationPanel verification={record.summary.verification} />}
      {record.environment.agents && <AgentsTable agents={record.environment.agents} />}
      {record.faults && record.faults.length > 0 && <FaultsTable faults={record.faults} />}
      {samples && samples.length > 0 && (
        <RunCharts samples={samples} label={record.scenario.name} downloadId={record.id} faults={marks} />
      )}
      {record.status !== 'running' && (
        <LatencyHeatmaps runs={[{ id: record.id, label: record.scenario.name }]} />
      )}
      {samples && samples.length === 0 && <p className="muted">No samples were stored for this run.</p>}
      <div className="two-col">
        <Panel title="Scenario (resolved)" testId="scenario-yaml">
          <pre className="yaml">{scenarioToYaml(record.scenario)}</pre>
        </Panel>
        <Panel title="Environment">
          <EnvironmentTable record={record} />
        </Panel>
      </div>
    </div>
  );
}
