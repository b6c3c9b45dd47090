// A run as it happens: progress, headline figures and live charts; the summary when it ends.
import type { Sample } from '@kbench/schema';
import { useEffect, useMemo, useState } from 'react';
import { type ApiError, api, type RunRecord } from '../api';
import { ErrorNote, ProgressBar, Stat, StatusBadge } from '../components/bits';
import { RunCharts } from '../components/RunCharts';
import { SummaryTable } from '../components/SummaryTable';
import { formatCount, formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';
import { useLiveRun } from '../live';
import { href } from '../router';

const MIB = 1024 * 1024;

function perSec(count: number, s: Sample): number {
  return s.intervalMs > 0 ? (count / s.intervalMs) * 1000 : 0;
}

function Headline({ last }: { last: Sample | undefined }) {
  return (
    <div className="stats" data-testid="live-figures">
      <Stat
        label="produced, last second"
        value={formatRecordsPerSec(last ? perSec(last.producedRecords, last) : null)}
        testId="live-rate"
      />
      <Stat
        label="value bytes produced"
        value={formatMBPerSec(last ? perSec(last.producedBytes, last) / MIB : null)}
      />
      <Stat
        label="consumed, last second"
        value={formatRecordsPerSec(last ? perSec(last.consumedRecords, last) : null)}
      />
      <Stat label="publish latency p99" value={formatMs(last?.publishP99Ms)} />
      <Stat label="end-to-end latency p99" value={formatMs(last?.e2eP99Ms)} />
      <Stat label="backlog (records)" value={formatCount(last?.backlog)} />
    </div>
  );
}

export function LiveRunPage({ id }: { id: string }) {
  const live = useLiveRun(id);
  const [initial, setInitial] = useState<RunRecord | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [stopping, setStopping] = useState(false);
  const [finalSamples, setFinalSamples] = useState<Sample[] | null>(null);

  useEffect(() => {
    api.run(id).then(setInitial, setError);
  }, [id]);

  // Once stored, chart the history's copy of the samples (the same data, complete).
  useEffect(() => {
    if (live.record) api.samples(id).then(setFinalSamples, () => setFinalSamples(null));
  }, [id, live.record]);

  const record = live.record ?? initial;
  const samples = finalSamples ?? live.samples;
  const last = live.samples[live.samples.length - 1];
  const ended = live.record !== null;
  const label = useMemo(() => record?.scenario.name, [record]);

  const stop = async () => {
    setStopping(true);
    try {
      await api.stopRun(id);
    } catch (err) {
      setError(err as ApiError);
      setStopping(false);
    }
  };

  if (error && !record) return <ErrorNote error={error} />;

  return (
    <div data-testid="live-page">
      <div className="page-head">
        <div>
          <div className="crumbs">
            <a href={href.history}>History</a> / run <code>{id}</code>
          </div>
          <h1>
            {record?.scenario.name ?? 'Run'}{' '}
            {record && <StatusBadge status={live.record?.status ?? 'running'} />}
          </h1>
          {record?.scenario.description && <p className="muted">{record.scenario.description}</p>}
        </div>
        <div className="actions">
          {!ended && (
            <button
              type="button"
              className="btn danger"
              onClick={stop}
              disabled={stopping}
              data-testid="stop-run"
            >
              {stopping ? 'Stopping…' : '■ Stop'}
            </button>
          )}
          {ended && (
            <a className="btn" href={href.run(id)} data-testid="open-run">
              Run details →
            </a>
          )}
        </div>
      </div>
      {error && <ErrorNote error={error} />}
      {!ended && live.progress && <ProgressBar progress={live.progress} />}
      {!ended && !live.progress && (
        <p className="muted">
          {live.connected
            ? 'Recorded by another process (the CLI): figures arrive as it stores them, every few seconds.'
            : 'Connecting…'}
        </p>
      )}
      {ended && live.record?.error && <ErrorNote error={live.record.error} />}
      {ended && live.record?.summary && <SummaryTable summary={live.record.summary} />}
      {!ended && <Headline last={last} />}
      {(samples.length > 0 || !ended) && <RunCharts samples={samples} {...(label ? { label } : {})} />}
    </div>
  );
}
