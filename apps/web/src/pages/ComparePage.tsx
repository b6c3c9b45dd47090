// 2 to 8 runs side by side: headline figures (as changes against a chosen baseline run), the
// settings that differ, and every comparison chart.
import { compareCharts, comparedRuns } from '@kbench/charts';
import {
  changeText,
  distinctNames,
  figureOf,
  HEADLINE_FIGURES,
  type HeadlineFigure,
  percentChange,
  runCaveatsText,
  scenarioDifferences,
  storedRunCaveats,
} from '@kbench/schema';
import { useEffect, useMemo, useState } from 'react';
import { api, type RunRecord, type Sample } from '../api';
import {
  CaveatWarning,
  ConcurrentMark,
  ConcurrentWarning,
  ErrorNote,
  Panel,
  StatusBadge,
} from '../components/bits';
import { LatencyHeatmaps } from '../components/LatencyHeatmaps';
import { ChartGrid } from '../components/RunCharts';
import { formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';
import { href } from '../router';

interface Loaded {
  runs: RunRecord[];
  samples: Sample[][];
}

const SETTINGS_ROWS: { label: string; value: (r: RunRecord) => string }[] = [
  { label: 'Target', value: (r) => r.environment.target },
  { label: 'Driver', value: (r) => r.environment.driver },
];

const FORMAT: Record<HeadlineFigure['unit'], (value: number | null) => string> = {
  'rec/s': formatRecordsPerSec,
  'MB/s': formatMBPerSec,
  ms: formatMs,
  cores: (value) => (value === null ? '–' : `${value.toFixed(2)} cores`),
};

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A run's figure, and beside it its change against the baseline's (coloured by whether it is better). */
function FigureCell({
  figure,
  run,
  baseline,
}: {
  figure: HeadlineFigure;
  run: RunRecord;
  baseline: RunRecord | undefined;
}) {
  const value = figureOf(figure, run.summary);
  const base = baseline && baseline !== run ? figureOf(figure, baseline.summary) : null;
  const change = percentChange(value, base);
  const better =
    change !== null && change !== 0 && figure.better !== undefined
      ? change > 0 === (figure.better === 'higher')
      : null;
  return (
    <td className="num">
      {FORMAT[figure.unit](value)}
      {change !== null && (
        <span className={`delta${better === null ? '' : better ? ' better' : ' worse'}`} data-testid="delta">
          {changeText(value, base)}
        </span>
      )}
    </td>
  );
}

export function ComparePage({ ids }: { ids: string[] }) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [baselineId, setBaselineId] = useState('');
  useEffect(() => {
    Promise.all([Promise.all(ids.map(api.run)), Promise.all(ids.map(api.samples))]).then(
      ([runs, samples]) => setLoaded({ runs, samples }),
      setError,
    );
  }, [ids]);
  const charts = useMemo(
    () => (loaded ? compareCharts(comparedRuns(loaded.runs, loaded.samples)) : []),
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
  const names = distinctNames(runs.map((r) => r.scenario.name));
  const baseline = runs.find((r) => r.id === baselineId);
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
      {runs.map((r) => {
        const rest = runCaveatsText(storedRunCaveats(r));
        return rest ? <CaveatWarning key={`${r.id}-caveats`} id={r.id} text={rest} /> : null;
      })}
      <Panel title="Headline figures (measured phase)" testId="compare-table">
        <label className="compare-baseline">
          Changes against{' '}
          <select
            value={baselineId}
            onChange={(e) => setBaselineId(e.target.value)}
            data-testid="compare-baseline"
          >
            <option value="">no baseline</option>
            {runs.map((r, i) => (
              <option key={r.id} value={r.id}>
                {r.id.slice(0, 6)} {names[i]}
              </option>
            ))}
          </select>
        </label>
        <table className="table compare-table">
          <thead>
            <tr>
              <th />
              {runs.map((r, i) => (
                <th key={r.id}>
                  <a href={href.run(r.id)} title={r.scenario.name}>
                    {names[i]}
                  </a>
                  <div className="id">{r.id}</div>
                  <StatusBadge status={r.status} />
                  {r === baseline && (
                    <span className="badge badge-baseline" data-testid="baseline-mark">
                      baseline
                    </span>
                  )}
                  {r.concurrentWith && <ConcurrentMark others={r.concurrentWith} />}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {SETTINGS_ROWS.map((row) => (
              <tr key={row.label}>
                <td>{row.label}</td>
                {runs.map((r) => (
                  <td key={r.id} className="num">
                    {row.value(r)}
                  </td>
                ))}
              </tr>
            ))}
            {HEADLINE_FIGURES.map((figure) => (
              <tr key={figure.label}>
                <td>{capitalized(figure.label)}</td>
                {runs.map((r) => (
                  <FigureCell key={r.id} figure={figure} run={r} baseline={baseline} />
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
      <LatencyHeatmaps runs={runs.map((r, i) => ({ id: r.id, label: names[i] ?? r.scenario.name }))} />
    </div>
  );
}
