// A run as it happens: progress, headline figures and live charts; the summary when it ends.

import { faultMarks } from '@kbench/charts';
import { parseReproductionTag, type Sample } from '@kbench/schema';
import { useEffect, useMemo, useRef, useState } from 'react';
import { type ApiError, api, type RunOwner, type RunRecord, type SweepInfo } from '../api';
import { ConcurrentWarning, ErrorNote, ProgressBar, Stat, StatusBadge } from '../components/bits';
import { FaultsTable } from '../components/FaultsTable';
import { RunCharts } from '../components/RunCharts';
import { SummaryTable } from '../components/SummaryTable';
import { formatCount, formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';
import { useLiveRun } from '../live';
import { href, navigate } from '../router';

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

/** The sweep this run belongs to, refreshed after it ends until the next run has started. */
function useSweep(id: string, ended: boolean) {
  const [sweep, setSweep] = useState<SweepInfo | null>(null);
  useEffect(() => {
    let cancelled = false;
    const load = () =>
      api.sweep(id).then(
        (s) => !cancelled && setSweep(s),
        () => !cancelled && setSweep(null),
      );
    void load();
    const timer = ended ? setInterval(load, 1000) : undefined;
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [id, ended]);
  return sweep;
}

/**
 * The runs this one went on with; re-read while it runs, since a run started beside it later is
 * recorded on it too.
 */
function useConcurrentWith(id: string, ended: boolean, record: RunRecord | null): string[] | undefined {
  const [polled, setPolled] = useState<string[] | undefined>(undefined);
  useEffect(() => {
    if (ended) return;
    const timer = setInterval(() => {
      api.run(id).then(
        (r) => setPolled(r.concurrentWith),
        () => {},
      );
    }, 5000);
    return () => clearInterval(timer);
  }, [id, ended]);
  return (ended ? undefined : polled) ?? record?.concurrentWith;
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

  // Who runs it: Stop is offered only when it reaches the run (this server's, or a CLI run it can signal).
  const [owner, setOwner] = useState<RunOwner | null>(null);
  useEffect(() => {
    api.owner(id).then(setOwner, () => setOwner(null));
  }, [id]);

  // A run that had ended before the page opened is shown as stored, not as running while the
  // event stream connects.
  const stored = live.record ?? (initial && initial.status !== 'running' ? initial : null);

  // Once stored, chart the history's copy of the samples (the same data, complete).
  useEffect(() => {
    if (stored) api.samples(id).then(setFinalSamples, () => setFinalSamples(null));
  }, [id, stored]);

  const record = live.record ?? initial;
  const samples = finalSamples ?? live.samples;
  const last = live.samples[live.samples.length - 1];
  const ended = stored !== null;
  const sweep = useSweep(id, ended);
  const concurrentWith = useConcurrentWith(id, ended, record);
  const label = useMemo(() => record?.scenario.name, [record]);
  // The scenario's fault timeline while the run is live; the faults it recorded once it has ended.
  const marks = useMemo(() => (record ? faultMarks(record) : []), [record]);
  // A run of a reproduction links back to it (initial has the tags; the live record may not).
  const reproduction = useMemo(() => {
    const tag = initial?.tags.find((t) => parseReproductionTag(t));
    const parsed = tag ? parseReproductionTag(tag) : undefined;
    return tag && parsed ? { tag, folder: parsed.folder } : null;
  }, [initial]);

  // Whether this page watched the run going (not opened on it afterwards, say with Back).
  const watched = useRef(false);
  if (record && !ended) watched.current = true;

  // A sweep: follow it from run to run while it goes. Comparing targets opens the comparison at the
  // end; any other sweep stays on its last run, which offers the comparison. A page opened on a run
  // of a finished sweep stays put, so that Back leads back through the runs.
  useEffect(() => {
    if (!ended || !sweep || (sweep.finished && !watched.current)) return;
    const next = sweep.ids[sweep.ids.indexOf(id) + 1];
    if (next) navigate(href.live(next));
    else if (sweep.knob === 'target' && sweep.finished && sweep.ids.length > 1)
      navigate(href.compare(sweep.ids));
  }, [ended, sweep, id]);

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
            {record?.scenario.name ?? 'Run'} {record && <StatusBadge status={stored?.status ?? 'running'} />}
          </h1>
          {record?.scenario.description && <p className="muted">{record.scenario.description}</p>}
          {reproduction && (
            <p className="muted" data-testid="reproduction-link">
              Part of a reproduction of{' '}
              <a href={href.reproduction(reproduction.folder, reproduction.tag)}>{reproduction.folder}</a>
            </p>
          )}
          {sweep && (
            <p className="muted" data-testid="sweep-position">
              {sweep.knob === 'target' ? 'Comparing targets' : `Sweep over ${sweep.knob}`}: run{' '}
              {sweep.ids.indexOf(id) + 1} of {sweep.total}
              {record ? ` (target ${record.scenario.target})` : ''}
              {sweep.finished && sweep.error ? `; the sweep ended early: ${sweep.error}` : ''}
            </p>
          )}
        </div>
        <div className="actions">
          {!ended && owner?.stoppable && (
            <button
              type="button"
              className="btn danger"
              onClick={stop}
              disabled={stopping}
              data-testid="stop-run"
              title={owner.owner ? `Stops ${owner.owner} as Ctrl-C would` : undefined}
            >
              {stopping ? 'Stopping…' : '■ Stop'}
            </button>
          )}
          {ended && sweep && !sweep.finished && sweep.ids.at(-1) !== id && (
            <a className="btn primary" href={href.live(sweep.ids.at(-1) as string)} data-testid="sweep-next">
              Next run of the sweep →
            </a>
          )}
          {ended && sweep?.finished && sweep.ids.length > 1 && (
            <a className="btn primary" href={href.compare(sweep.ids)} data-testid="sweep-compare">
              Compare the sweep ({sweep.ids.length} runs)
            </a>
          )}
          {ended && (
            <a className="btn" href={href.run(id)} data-testid="open-run">
              Run details →
            </a>
          )}
        </div>
      </div>
      {error && <ErrorNote error={error} />}
      {concurrentWith && <ConcurrentWarning others={concurrentWith} />}
      {!ended && owner && !owner.stoppable && (
        <p className="muted" data-testid="stop-unavailable">
          No Stop here: {owner.reason}.
        </p>
      )}
      {!ended && live.progress && <ProgressBar progress={live.progress} />}
      {!ended && !live.progress && (
        <p className="muted">
          {live.connected
            ? 'Recorded by another process (the CLI): figures arrive as it stores them, every few seconds.'
            : 'Connecting…'}
        </p>
      )}
      {stored?.error && <ErrorNote error={stored.error} />}
      {stored?.summary && (
        <SummaryTable
          summary={stored.summary}
          scenario={stored.scenario}
          concurrentWith={stored.concurrentWith}
        />
      )}
      {stored?.faults && stored.faults.length > 0 && <FaultsTable faults={stored.faults} />}
      {!ended && <Headline last={last} />}
      {(samples.length > 0 || !ended) && (
        <RunCharts samples={samples} faults={marks} id={id} {...(label ? { label } : {})} />
      )}
    </div>
  );
}
