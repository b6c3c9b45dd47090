// 2 to 8 runs side by side: headline figures, the settings that differ, and every comparison chart.
import { compareCharts, runLabel } from '@kbench/charts';
import { scenarioDifferences } from '@kbench/schema';
import { useEffect, useMemo, useState } from 'react';
import { api, type RunRecord, type Sample } from '../api';
import { ConcurrentMark, ConcurrentWarning, ErrorNote, Panel, StatusBadge } from '../components/bits';
import { ChartGrid } from '../components/RunCharts';
import { formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';
import { href } from '../router';

interface Loaded {
  runs: RunRecord[];
  samples: Sample[][];
}

const ROWS: { label: string; value: (r: RunRecord) => string }[] = [
  { label: 'Target', value: (r) => r.environment.target },
  { label: 'Driver', value: (r) => r.environment.driver },
  { label: 'Produced', value: (r) => formatRecordsPerSec(r.summary?.produced.recordsPerSec) },
  { label: 'Value bytes', value: (r) => formatMBPerSec(r.summary?.produced.mbPerSec) },
  { label: 'Consumed', value: (r) => formatRecordsPerSec(r.summary?.consumed.recordsPerSec) },
  { label: 'Publish p50', value: (r) => formatMs(r.summary?.publishLatencyMs?.p50) },
  { label: 'Publish p99', value: (r) => formatMs(r.summary?.publishLatencyMs?.p99) },
  { label: 'Publish p99.9', value: (r) => formatMs(r.summary?.publishLatencyMs?.p999) },
  { label: 'Publish max', value: (r) => formatMs(r.summary?.publishLatencyMs?.max) },
  { label: 'End-to-end p50', value: (r) => formatMs(r.summary?.endToEndLatencyMs?.p50) },
  { label: 'End-to-end p99', value: (r) => formatMs(r.summary?.endToEndLatencyMs?.p99) },
];

export function ComparePage({ ids }: { ids: string[] }) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    Promise.all([Promise.all(ids.map(api.run)), Promise.all(ids.map(api.samples))]).then(
      ([runs, samples]) => setLoaded({ runs, samples }),
      setError,
    );
  }, [ids]);
  const charts = useMemo(
    () =>
      loaded
        ? compareCharts(
            loaded.runs.map((r, i) => ({
              label: runLabel(r),
              summary: r.summary,
              samples: loaded.samples[i] ?? [],
            })),
          )
        : [],
    [loaded],
  );
  const differences = useMemo(
    () => (loaded ? scenarioDifferences(loaded.runs.map((r) => r.scenario)) : []),
    [loaded],
  );

  if (ids.length < 2 || ids.length > 8) {
    return (
      <ErrorNote error={`Compare takes 2 to 8 runs; pick them in the History page (got ${ids.length}).`} />
    );
  }
  if (error) return <ErrorNote error={error} />;
  if (!loaded) return <p className="muted">Loading {ids.length} runs…</p>;
  const { runs } = loaded;
  const storedIds = runs.map((r) => r.id);
  return (
    <div data-testid="compare-page">
      <div className="page-head">
        <h1>Compare {runs.length} runs</h1>
        <a
          className="btn"
          href={`/api/compare/report.html?ids=${storedIds.join(',')}`}
          download
          data-testid="compare-report"
        >
          ⬇ HTML report
        </a>
      </div>
      {runs.map((r) =>
        r.concurrentWith ? <ConcurrentWarning key={r.id} id={r.id} others={r.concurrentWith} /> : null,
      )}
      <Panel title="Headline figures (measured phase)" testId="compare-table">
        <table className="table">
          <thead>
            <tr>
              <th />
              {runs.map((r) => (
                <th key={r.id}>
                  <a href={href.run(r.id)}>{r.scenario.name}</a>
                  <div className="id">{r.id}</div>
                  <StatusBadge status={r.status} />
                  {r.concurrentWith && <ConcurrentMark others={r.concurrentWith} />}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {ROWS.map((row) => (
              <tr key={row.label}>
                <td>{row.label}</td>
                {runs.map((r) => (
                  <td key={r.id} className="num">
                    {row.value(r)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </Panel>
      <Panel
        title={differences.length ? 'Settings that differ' : 'Settings: identical'}
        testId="compare-differences"
      >
        {differences.length === 0 ? (
          <p className="muted">
            Every scenario setting is the same in these runs (names and descriptions aside).
          </p>
        ) : (
          <table className="table">
            <tbody>
              {differences.map((d) => (
                <tr key={d.path} className="differs" data-testid="difference">
                  <td>{d.path}</td>
                  {d.values.map((v, i) => (
                    <td key={storedIds[i]}>{v}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
      <div className="compare-bar">
        <span className="muted">Samples as CSV:</span>
        {runs.map((r) => (
          <a key={r.id} href={api.csvUrl(r.id)} download data-testid={`csv-${r.id}`}>
            {r.id.slice(0, 6)}
          </a>
        ))}
      </div>
      <ChartGrid specs={charts} downloadIds={storedIds} />
    </div>
  );
}
