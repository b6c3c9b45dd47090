// A write-up reproduced: the series' progress, then per experiment their figures beside ours, the
// direction verdicts of the folder's rules, and comparisons of the runs. Past reproductions selectable.
import { aboutDuration, metricLabel, type ReproductionProgress, verdictOutcome } from '@kbench/schema';
import { useEffect, useState } from 'react';
import { ApiError, api, type ReproductionResults } from '../api';
import { ErrorNote, Panel, StatusBadge } from '../components/bits';
import { ReproduceButtons } from '../components/ReproduceButtons';
import { formatDateTime, formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';
import { href, navigate } from '../router';

/** The compare page takes 2 to 8 runs. */
const MAX_COMPARE = 8;

function figure(metric: string, value: number | null): string {
  if (value === null) return '–';
  if (metric.includes('LatencyMs.')) return formatMs(value);
  if (/recordsPerSec$/.test(metric)) return formatRecordsPerSec(value);
  if (/[mM]bPerSec$/.test(metric)) return formatMBPerSec(value);
  return value.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

/** Run i of N with a bar, the time left and Stop, while a reproduction goes. */
function Underway({ progress }: { progress: ReproductionProgress }) {
  const [stopping, setStopping] = useState(false);
  const [stopError, setStopError] = useState<Error | null>(null);
  const { estimatedSeconds: estimated, remainingSeconds: remaining } = progress;
  // By time where every run's length is known ahead; by runs finished otherwise.
  const [value, max] =
    estimated !== null && remaining !== null && estimated > 0
      ? [Math.max(0, estimated - remaining), estimated]
      : [Math.max(0, progress.started - 1), progress.total];
  const stop = async () => {
    if (!progress.current) return;
    setStopping(true);
    setStopError(null);
    try {
      await api.stopRun(progress.current);
    } catch (err) {
      setStopError(err as Error);
      setStopping(false);
    }
  };
  return (
    <div data-testid="reproduction-running">
      <p>
        Run {progress.started} of {progress.total}
        {progress.owner !== 'this workbench' && <span className="muted"> · run by {progress.owner}</span>}
        {progress.current && (
          <>
            {' '}
            · <a href={href.live(progress.current)}>watch it live →</a>
          </>
        )}
      </p>
      <div className="reproduction-bar">
        <progress value={value} max={max} aria-label="Reproduction progress" />
        <span className="muted" data-testid="reproduction-eta">
          {remaining === null
            ? 'time left not known (a run bounded by a record count)'
            : `${aboutDuration(remaining)} left`}
        </span>
        <button
          type="button"
          className="btn danger"
          disabled={stopping || !progress.current}
          onClick={stop}
          data-testid="reproduction-stop"
          title="Stops the run under way; the runs after it do not start"
        >
          {stopping ? 'Stopping…' : '■ Stop'}
        </button>
      </div>
      {stopError && <ErrorNote error={stopError} />}
    </div>
  );
}

/** How a series this page followed ended: stopped, or finished. */
function endedText(progress: ReproductionProgress): string {
  if (progress.error?.startsWith('stopped'))
    return `Stopped at run ${progress.started} of ${progress.total}; the runs after it did not start.`;
  return `Finished: ${progress.started} of ${progress.total} runs.`;
}

function CompareLink({ ids, label, testId }: { ids: string[]; label: string; testId: string }) {
  if (ids.length < 2) return null;
  if (ids.length > MAX_COMPARE)
    return (
      <span className="muted" data-testid={testId}>
        {label}: {ids.length} runs, more than the {MAX_COMPARE} a comparison shows (pick them in the History)
      </span>
    );
  return (
    <a className="btn" href={href.compare(ids)} data-testid={testId}>
      {label} ({ids.length} runs)
    </a>
  );
}

export function ReproductionPage({ folder, tag }: { folder: string; tag: string | null }) {
  const [results, setResults] = useState<ReproductionResults | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [startError, setStartError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const inProgress = results?.progress ? !results.progress.finished : false;

  useEffect(() => {
    let cancelled = false;
    const load = () =>
      api.reproductionResults(folder, tag).then(
        (r) => {
          if (cancelled) return;
          setResults(r);
          setError(null);
        },
        (err: Error) => !cancelled && setError(err),
      );
    void load();
    // While the series runs, follow it; a finished one does not change.
    const timer = inProgress ? setInterval(load, 1500) : undefined;
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [folder, tag, inProgress]);

  const reproduce = async (quick: boolean) => {
    setBusy(true);
    setStartError(null);
    try {
      const started = await api.startReproduction({ folder, quick });
      navigate(href.reproduction(folder, started.tag));
    } catch (err) {
      setStartError(err instanceof ApiError ? err : new ApiError(0, (err as Error).message));
    } finally {
      setBusy(false);
    }
  };

  if (error && !results) return <ErrorNote error={error} />;
  if (!results) return <p className="muted">Loading {folder}…</p>;
  const { progress } = results;
  const allIds = results.experiments.flatMap((e) => e.runs.map((r) => r.id));
  const ended = !inProgress;

  return (
    <div data-testid="reproduction-page" data-folder={folder}>
      <div className="page-head">
        <div>
          <div className="crumbs">
            <a href={href.scenarios}>Scenarios</a> / {folder}/
          </div>
          <h1>Reproduction: {results.title}</h1>
          {results.url && (
            <p className="muted">
              Published at{' '}
              <a href={results.url} target="_blank" rel="noreferrer" data-testid="writeup-link">
                {results.url}
              </a>
            </p>
          )}
          {results.setup && <p className="muted">Their setup: {results.setup}</p>}
        </div>
        <ReproduceButtons estimate={results.estimate} disabled={busy || inProgress} onReproduce={reproduce} />
      </div>
      {startError && <ErrorNote error={startError} />}
      {error && <ErrorNote error={error} />}

      {results.tag === null ? (
        <p className="muted" data-testid="no-reproduction">
          Not reproduced yet. Reproduce runs every scenario of the folder that kbench can run here, one after
          another, and checks the direction of each published effect on our figures.
        </p>
      ) : (
        <Panel title="This reproduction" testId="reproduction-progress">
          <div className="reproduction-head">
            <label>
              Reproduction{' '}
              <select
                value={results.tag}
                onChange={(e) => navigate(href.reproduction(folder, e.target.value))}
                data-testid="reproduction-select"
              >
                {results.reproductions.map((r) => (
                  <option key={r.tag} value={r.tag}>
                    {formatDateTime(r.startedAt)}
                    {r.quick ? ' (quick)' : ''}, {r.runs} run{r.runs === 1 ? '' : 's'}
                  </option>
                ))}
              </select>
            </label>{' '}
            <code className="muted">{results.tag}</code>
          </div>
          {progress && !progress.finished && <Underway progress={progress} />}
          {ended && (
            <p data-testid="reproduction-done">
              {progress
                ? endedText(progress)
                : `Stored: ${allIds.length} run${allIds.length === 1 ? '' : 's'}, started ${formatDateTime(results.startedAt)}.`}
              {results.quick &&
                ' Quick run: each scenario shortened to seconds, so the figures only show that it runs and each verdict is indicative only.'}
            </p>
          )}
          {progress?.error && !progress.error.startsWith('stopped') && <ErrorNote error={progress.error} />}
          {ended && <CompareLink ids={allIds} label="Compare all runs" testId="compare-all" />}
        </Panel>
      )}

      {results.experiments.map((e) => {
        const ids = e.runs.map((r) => r.id);
        return (
          <Panel key={e.scenario} title={e.title} testId="experiment">
            <div data-scenario={e.scenario} data-testid={`experiment-${e.scenario}`}>
              <p className="muted">
                <a href={href.compose(e.path)}>{e.path}</a>
              </p>
              <div className="reproduction-figures">
                <table className="table compact" data-testid="published-figures">
                  <caption>Published (their hardware)</caption>
                  <tbody>
                    {Object.entries(e.published).map(([k, v]) => (
                      <tr key={k}>
                        <th scope="row">{k}</th>
                        <td>{v}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {e.runs.length > 0 && (
                  <table className="table compact" data-testid="our-figures">
                    <caption>Ours</caption>
                    <thead>
                      <tr>
                        <th>run</th>
                        <th>status</th>
                        {e.figures.map((m) => (
                          <th key={m} className="num">
                            {metricLabel(m)}
                          </th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {e.runs.map((r) => (
                        <tr key={r.id} data-testid="our-run" data-run-id={r.id}>
                          <td>
                            <a href={r.status === 'running' ? href.live(r.id) : href.run(r.id)}>
                              {r.sweepValue ?? 'run'}
                            </a>{' '}
                            <code className="muted">{r.id}</code>
                          </td>
                          <td>
                            <StatusBadge status={r.status} />
                          </td>
                          {e.figures.map((m) => (
                            <td key={m} className="num">
                              {figure(m, r.figures[m] ?? null)}
                            </td>
                          ))}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </div>
              {e.note && (
                <p className="muted" data-testid="experiment-note">
                  Note: {e.note}
                </p>
              )}
              {e.notRun.map((reason) => (
                <p key={reason} className="muted" data-testid="not-run">
                  Not run here: {reason}
                </p>
              ))}
              {e.verdicts.length > 0 &&
                (ended && results.tag !== null ? (
                  <ul className="verdicts" data-testid="verdicts">
                    {e.verdicts.map((v) => {
                      const o = verdictOutcome(v, results.quick);
                      return (
                        <li
                          key={v.says}
                          data-testid="verdict"
                          data-outcome={o.kind}
                          data-indicative={results.quick}
                        >
                          <span
                            className={`verdict verdict-${o.kind}${results.quick ? ' verdict-indicative' : ''}`}
                          >
                            {o.text}
                          </span>{' '}
                          {v.says} <span className="muted">({v.detail.replace(/^not checked: /, '')})</span>
                        </li>
                      );
                    })}
                  </ul>
                ) : (
                  <ul className="verdicts muted">
                    {e.verdicts.map((v) => (
                      <li key={v.says}>Direction to check: {v.says}</li>
                    ))}
                  </ul>
                ))}
              {ended && <CompareLink ids={ids} label="Compare" testId="compare-experiment" />}
            </div>
          </Panel>
        );
      })}
    </div>
  );
}
