// A scenario's trend on a target: a chart per headline figure over its completed runs, change points
// (e-divisive means) with the means either side, the best run by the figure's direction, and the
// runs behind the points (a point opens its run).
import { changeLabel, trendCharts } from '@kbench/charts';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, type Trend, type TrendSeries } from '../api';
import { ConcurrentMark, ErrorNote } from '../components/bits';
import { EChart, type EChartsOption } from '../components/EChart';
import { formatDateTime, formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';
import { href, navigate } from '../router';

function formatFigure(series: TrendSeries, value: number | null | undefined): string {
  if (series.unit === 'ms') return formatMs(value);
  if (series.unit === 'MB/s') return formatMBPerSec(value);
  return formatRecordsPerSec(value);
}

/** What a figure's chart says under it: its best run and each change point, each run a link. */
function SeriesNotes({ series }: { series: TrendSeries }) {
  return (
    <ul className="trend-notes" data-testid={`trend-notes-${series.metric}`}>
      <li>
        Best ({series.better} is better):{' '}
        {series.best ? (
          <>
            <a href={href.run(series.best.runId)} data-testid="trend-best">
              <code>{series.best.runId}</code>
            </a>{' '}
            {formatFigure(series, series.best.value)}
          </>
        ) : (
          'none'
        )}
      </li>
      {series.changePoints.length === 0 && <li className="muted">No change point.</li>}
      {series.changePoints.map((change) => (
        <li key={change.runId} className={`change-${change.verdict}`} data-testid="trend-change">
          Change at{' '}
          <a href={href.run(change.runId)}>
            <code>{change.runId}</code>
          </a>
          : {changeLabel(series, change)}, p = {change.pValue.toFixed(3)}
        </li>
      ))}
    </ul>
  );
}

/** The runs behind the points, oldest first, each figure in its column, the best one marked. */
function TrendRuns({ trend }: { trend: Trend }) {
  return (
    <table className="table compact" data-testid="trend-runs">
      <thead>
        <tr>
          <th>Run</th>
          <th>Started</th>
          {trend.series.map((s) => (
            <th key={s.metric} className="num">
              {s.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {trend.runs.map((run, i) => (
          <tr key={run.id} data-testid="trend-run" data-run-id={run.id}>
            <td>
              <a href={href.run(run.id)}>
                <code>{run.id}</code>
              </a>{' '}
              {run.concurrentWith && <ConcurrentMark others={run.concurrentWith} />}
              {run.machineShared && (
                <span
                  className="badge badge-concurrent"
                  title={`${run.machineShared}: left out of change points and the best while other runs had a quiet machine`}
                  data-testid="shared-mark"
                >
                  machine shared
                </span>
              )}
              {run.clientPaced && (
                <span className="badge badge-concurrent" title={run.clientPaced} data-testid="paced-mark">
                  client-paced
                </span>
              )}
            </td>
            <td className="nowrap">{formatDateTime(run.startedAt)}</td>
            {trend.series.map((s) => (
              <td key={s.metric} className="num">
                {formatFigure(s, s.values[i])}
                {s.best?.runId === run.id && <strong title="best run"> ★</strong>}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function TrendsPage({
  scenario,
  target,
  sweepValue,
}: {
  scenario: string;
  target: string | null;
  sweepValue: string | null;
}) {
  const [trend, setTrend] = useState<Trend | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    api
      .trend({ scenario, ...(target ? { target } : {}), ...(sweepValue ? { sweepValue } : {}) })
      .then(setTrend, setError);
  }, [scenario, target, sweepValue]);
  const charts = useMemo(() => (trend ? trendCharts(trend) : []), [trend]);
  // A point is named by its run's id: clicking it opens the run.
  const openRun = useCallback((item: { seriesIndex?: number; name?: string }) => {
    if (item.seriesIndex === 0 && item.name) navigate(href.run(item.name));
  }, []);

  if (error) return <ErrorNote error={error} />;
  if (!trend) return <p className="muted">Loading the trend…</p>;
  return (
    <div data-testid="trends-page">
      <div className="page-head">
        <div>
          <div className="crumbs">
            <a href={href.history}>History</a> / trend
          </div>
          <h1>
            {trend.scenario}{' '}
            <span className="muted">
              {trend.sweepValue === undefined ? '' : `at sweep value ${trend.sweepValue} `}on {trend.target}
            </span>
          </h1>
          <p className="muted">
            {trend.runs.length} completed run{trend.runs.length === 1 ? '' : 's'}, oldest first. Change points
            by e-divisive means (permutation test, p ≤ 0.05); runs that shared the machine (hollow points) are
            left out of change points and the best run (runs beside busy processes only while other runs had a
            quiet machine); a triangle is a run whose client set the pace. Click a point to open its run.
          </p>
          {trend.runs.length < 8 && (
            <p className="muted" data-testid="trend-few-runs">
              With fewer than 8 runs even a clean change cannot pass the permutation test: run the scenario
              again to see changes.
            </p>
          )}
        </div>
      </div>
      <div className="chart-grid" data-testid="charts">
        {charts.map((spec, i) => {
          const series = trend.series[i] as TrendSeries;
          return (
            <section
              key={spec.id}
              className="panel chart-panel"
              aria-label={spec.title}
              data-testid={`chart-${spec.id}`}
            >
              <EChart option={spec.option as EChartsOption} height={320} onClick={openRun} />
              <div className="chart-downloads">
                {(['svg', 'png'] as const).map((format) => (
                  <a
                    key={format}
                    href={api.trendChartUrl(spec.id, format, {
                      scenario: trend.scenario,
                      target: trend.target,
                      ...(trend.sweepValue === undefined ? {} : { sweepValue: trend.sweepValue }),
                    })}
                    download
                    data-testid={`download-${spec.id}-${format}`}
                  >
                    {format.toUpperCase()}
                  </a>
                ))}
              </div>
              <SeriesNotes series={series} />
            </section>
          );
        })}
      </div>
      <TrendRuns trend={trend} />
    </div>
  );
}
