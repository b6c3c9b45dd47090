// Small shared pieces: status badge, headline figure, progress bar, empty and error states.
import { concurrentWarning } from '@kbench/schema';
import type { ReactNode } from 'react';
import type { ApiError, Progress, RunStatus } from '../api';
import { formatElapsed } from '../format';
import { href } from '../router';

export function StatusBadge({ status }: { status: RunStatus }) {
  return (
    <span className={`badge badge-${status}`} data-testid="run-status">
      {status}
    </span>
  );
}

/** A run's caveats besides concurrent runs (the client set the pace, the rate was not reached, ...). */
export function CaveatWarning({ id, text }: { id: string; text: string }) {
  return (
    <div className="concurrent-warning" role="note" data-testid="caveat-warning">
      <strong>⚠ Run {id}</strong>: {text}, so its figures are not the target's alone.
    </div>
  );
}

/** The warning for a run that shared the machine with others, each named with a link to it. */
export function ConcurrentWarning({ id, others }: { id?: string; others: string[] }) {
  return (
    <div className="concurrent-warning" role="note" data-testid="concurrent-warning">
      <strong>⚠ {id ? `Run ${id}` : 'This run'}</strong> {concurrentWarning(others)}. Ran with:{' '}
      {others.map((other, i) => (
        <span key={other}>
          {i > 0 ? ', ' : ''}
          <a href={href.run(other)}>
            <code>{other}</code>
          </a>
        </span>
      ))}
    </div>
  );
}

/** The mark of such a run in a list. */
export function ConcurrentMark({ others }: { others: string[] }) {
  return (
    <span
      className="badge badge-concurrent"
      title={`This run ${concurrentWarning(others)}`}
      data-testid="concurrent-mark"
    >
      concurrent
    </span>
  );
}

export function Stat({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="stat" data-testid={testId}>
      <div className="stat-value">{value}</div>
      <div className="stat-label">{label}</div>
    </div>
  );
}

const PHASE_LABEL: Record<Progress['phase'], string> = {
  starting: 'Starting',
  setup: 'Setting up topics',
  preload: 'Preloading the backlog',
  search: 'Searching for the maximum rate',
  warmup: 'Warming up',
  measuring: 'Measuring',
  stopping: 'Stopping',
  done: 'Done',
};

export function ProgressBar({ progress }: { progress: Progress }) {
  const fraction =
    progress.totalMs && progress.totalMs > 0
      ? progress.elapsedMs / progress.totalMs
      : progress.targetRecords
        ? progress.producedRecords / progress.targetRecords
        : null;
  const pct = fraction === null ? null : Math.min(100, Math.max(0, fraction * 100));
  return (
    <div className="progress" data-testid="progress">
      <div className="progress-head">
        <span className={`phase phase-${progress.phase}`} data-testid="progress-phase">
          {PHASE_LABEL[progress.phase]}
        </span>
        <span className="progress-time" data-testid="progress-time">
          {formatElapsed(progress.elapsedMs)}
          {progress.totalMs ? ` / ${formatElapsed(progress.totalMs)}` : ''}
        </span>
      </div>
      <div
        className="progress-track"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct === null ? undefined : Math.round(pct)}
      >
        <div
          className={`progress-fill${pct === null ? ' indeterminate' : ''}`}
          style={{ width: `${pct ?? 30}%` }}
        />
      </div>
    </div>
  );
}

export function Empty({ title, children, testId }: { title: string; children?: ReactNode; testId?: string }) {
  return (
    <div className="empty" data-testid={testId}>
      <h2>{title}</h2>
      {children}
    </div>
  );
}

export function ErrorNote({ error }: { error: ApiError | Error | string }) {
  const message = typeof error === 'string' ? error : error.message;
  const issues = typeof error === 'object' && 'issues' in error ? error.issues : [];
  return (
    <div className="error" role="alert" data-testid="error">
      <strong>{message}</strong>
      {issues.length > 0 && (
        <ul>
          {issues.map((i) => (
            <li key={`${i.path}:${i.message}`}>
              {i.path ? <code>{i.path}</code> : null} {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Panel({ title, children, testId }: { title: string; children: ReactNode; testId?: string }) {
  return (
    <section className="panel" data-testid={testId}>
      <h3 className="panel-title">{title}</h3>
      <div className="panel-body">{children}</div>
    </section>
  );
}
