// Every stored run, newest first; a row opens the run.
import { listedThroughput, RUN_STATUSES } from '@kbench/schema';
import { useEffect, useMemo, useState } from 'react';
import { api, type RunListItem, type RunStatus } from '../api';
import { ConcurrentMark, Empty, ErrorNote, StatusBadge } from '../components/bits';
import { formatDateTime, formatMBPerSec, formatMs, formatRecordsPerSec } from '../format';
import { href, navigate } from '../router';

type SortKey = 'name' | 'startedAt' | 'rate' | 'mbps' | 'p99';
const SORT_VALUE: Record<SortKey, (r: RunListItem) => string | number> = {
  name: (r) => r.name.toLowerCase(),
  startedAt: (r) => r.startedAt,
  rate: (r) => (r.summary ? listedThroughput(r.summary).recordsPerSec : -1),
  mbps: (r) => (r.summary ? listedThroughput(r.summary).mbPerSec : -1),
  p99: (r) => r.summary?.publishLatencyMs?.p99 ?? Number.POSITIVE_INFINITY,
};

/** How often the page asks whether the history changed (a run stored by this server or by the CLI). */
const VERSION_POLL_MS = 2000;

/** The history's version, re-read every few seconds: a change means a run was stored or updated. */
function useHistoryVersion(): string | null {
  const [version, setVersion] = useState<string | null>(null);
  useEffect(() => {
    const check = () =>
      api.runsVersion().then(
        (v) => setVersion(v.version),
        () => {},
      );
    void check();
    const timer = setInterval(check, VERSION_POLL_MS);
    return () => clearInterval(timer);
  }, []);
  return version;
}

/** Date and time, which a narrow window wraps onto two lines but never inside either. */
function DateTime({ iso }: { iso: string }) {
  const [date, time] = formatDateTime(iso).split(' ');
  return (
    <>
      <span className="nowrap">{date}</span> <span className="nowrap">{time}</span>
    </>
  );
}

export function HistoryPage() {
  const [runs, setRuns] = useState<RunListItem[] | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<RunStatus | ''>('');
  const [selected, setSelected] = useState<string[]>([]);
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'startedAt', desc: true });
  const sorted = useMemo(() => {
    const value = SORT_VALUE[sort.key];
    return [...(runs ?? [])].sort((a, b) => {
      const [x, y] = [value(a), value(b)];
      const order = x < y ? -1 : x > y ? 1 : 0;
      return sort.desc ? -order : order;
    });
  }, [runs, sort]);
  const header = (key: SortKey, label: string, numeric = false, extra = '') => (
    <th
      className={[numeric ? 'num' : '', extra].filter(Boolean).join(' ')}
      aria-sort={sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none'}
    >
      <button
        type="button"
        className="sort"
        onClick={() => setSort((s) => ({ key, desc: s.key === key ? !s.desc : key !== 'name' }))}
        data-testid={`sort-${key}`}
      >
        {label}
        {sort.key === key ? (sort.desc ? ' ▼' : ' ▲') : ''}
      </button>
    </th>
  );
  const toggle = (id: string) =>
    setSelected((now) => (now.includes(id) ? now.filter((x) => x !== id) : [...now, id].slice(-8)));

  // The list is read again whenever the history changes, whoever wrote it: a run the CLI stores
  // appears, and a running run's row stays current.
  const version = useHistoryVersion();
  useEffect(() => {
    if (version === null) return;
    const load = () => api.runs({ status, search: search.trim(), limit: 500 }).then(setRuns, setError);
    // Wait for typing to pause before asking the server.
    const timer = setTimeout(load, 200);
    return () => clearTimeout(timer);
  }, [search, status, version]);

  const filtered = search.trim() !== '' || status !== '';
  if (error) return <ErrorNote error={error} />;

  return (
    <div data-testid="history-page">
      <div className="page-head">
        <h1>History</h1>
        <div className="filters">
          <button
            type="button"
            className="btn primary"
            disabled={selected.length < 2}
            title="Tick 2 to 8 runs to put them side by side"
            onClick={() => navigate(href.compare(selected))}
            data-testid="compare-button"
          >
            Compare {selected.length > 0 ? `(${selected.length})` : ''}
          </button>
          <input
            className="search"
            type="search"
            placeholder="Search name, id, target, tags"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <select
            value={status}
            onChange={(e) => setStatus(e.target.value as RunStatus | '')}
            aria-label="Status"
          >
            <option value="">any status</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
      </div>
      {runs === null && <p className="muted">Loading runs…</p>}
      {runs !== null && runs.length === 0 && (
        <Empty title={filtered ? 'No runs match' : 'No runs yet'} testId="history-empty">
          {filtered ? (
            <p>Clear the search or the status filter to see every run.</p>
          ) : (
            <p>
              Launch a scenario from the <a href={href.scenarios}>Scenarios</a> page, or run one headless with{' '}
              <code>npx kbench run scenarios/quickstart.yaml</code>; every run lands here.
            </p>
          )}
        </Empty>
      )}
      {runs !== null && runs.length > 0 && (
        <table className="table runs" data-testid="history-table">
          <thead>
            <tr>
              <th className="select" aria-label="Select for comparison" />
              {header('name', 'Name')}
              <th>Target</th>
              {header('startedAt', 'Started')}
              <th>Status</th>
              {header('rate', 'Throughput', true)}
              {header('mbps', 'Value bytes', true, 'wide-only')}
              {header('p99', 'Publish p99', true)}
            </tr>
          </thead>
          <tbody>
            {sorted.map((run) => {
              const to = run.status === 'running' ? href.live(run.id) : href.run(run.id);
              const throughput = run.summary ? listedThroughput(run.summary) : null;
              const consumed = throughput?.side === 'consumed' && <div className="id">consumed</div>;
              return (
                <tr
                  key={run.id}
                  className="clickable"
                  data-testid="history-row"
                  data-run-id={run.id}
                  onClick={() => navigate(to)}
                >
                  <td className="select">
                    <input
                      type="checkbox"
                      onClick={(e) => e.stopPropagation()}
                      aria-label={`Select ${run.name} for comparison`}
                      checked={selected.includes(run.id)}
                      onChange={() => toggle(run.id)}
                      data-testid="history-select"
                    />
                  </td>
                  <td>
                    <a href={to} onClick={(e) => e.stopPropagation()}>
                      {run.name}
                    </a>
                    <div className="id">{run.id}</div>
                  </td>
                  <td>
                    {run.target}
                    <div className="id">{run.driver}</div>
                    {run.status === 'completed' && (
                      <a
                        className="id"
                        href={href.trend(run.name, run.target, run.sweepValue)}
                        onClick={(e) => e.stopPropagation()}
                        title={`Every completed run of ${run.name} on ${run.target}, over time`}
                        data-testid="trend-link"
                      >
                        trend
                      </a>
                    )}
                  </td>
                  <td>
                    <DateTime iso={run.startedAt} />
                  </td>
                  <td className="nowrap">
                    <StatusBadge status={run.status} />
                    {run.concurrentWith && <ConcurrentMark others={run.concurrentWith} />}
                  </td>
                  <td className="num" data-testid="history-rate">
                    {formatRecordsPerSec(throughput?.recordsPerSec)}
                    {/* In a narrow window the value bytes go under the rate, their column hidden. */}
                    <div className="id narrow-only">{formatMBPerSec(throughput?.mbPerSec)}</div>
                    {consumed}
                  </td>
                  <td className="num wide-only">
                    {formatMBPerSec(throughput?.mbPerSec)}
                    {consumed}
                  </td>
                  <td className="num">{formatMs(run.summary?.publishLatencyMs?.p99)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}
