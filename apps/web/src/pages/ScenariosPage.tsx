// Home: the scenario library, grouped by folder, each with a Run button; a write-up's folder (one with
// a published.yaml) shows its title and link and can be reproduced whole.
import { useEffect, useMemo, useState } from 'react';
import {
  ApiError,
  api,
  type ReproductionInfo,
  type RunListItem,
  type ScenarioEntry,
  type ScenarioOutline,
} from '../api';
import { Empty, ErrorNote } from '../components/bits';
import { ReproduceButtons } from '../components/ReproduceButtons';
import { formatBytes, formatDateTime } from '../format';
import { href, navigate } from '../router';

function groupByFolder(entries: ScenarioEntry[]): [string, ScenarioEntry[]][] {
  const groups = new Map<string, ScenarioEntry[]>();
  for (const e of entries) {
    const list = groups.get(e.folder) ?? [];
    list.push(e);
    groups.set(e.folder, list);
  }
  // Top-level files (the quick start) first, then folders in order.
  return [...groups.entries()].sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)));
}

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

/** "10s · kafkajs · 1 producer · 1 consumer · 3 partitions · 100 B" */
function outlineText(o: ScenarioOutline): string {
  const size =
    typeof o.messageSize === 'number'
      ? formatBytes(o.messageSize)
      : 'payloadFile' in o.messageSize
        ? 'payload file'
        : 'distribution' in o.messageSize
          ? `${o.messageSize.distribution}, mean ${formatBytes(o.messageSize.mean)}`
          : `${formatBytes(o.messageSize.min)}–${formatBytes(o.messageSize.max)}`;
  return [
    o.length,
    o.driver,
    o.target === 'bundled' ? `bundled, ${plural(o.nodes, 'node')}` : o.target,
    plural(o.producers, 'producer'),
    plural(o.consumers, 'consumer'),
    plural(o.partitions, 'partition'),
    `${size} records`,
    o.sweep ? 'sweep' : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

function ScenarioCard({
  entry,
  onRun,
  busy,
}: {
  entry: ScenarioEntry;
  onRun: (entry: ScenarioEntry) => void;
  busy: boolean;
}) {
  const [yaml, setYaml] = useState<string | null>(null);
  const toggleYaml = async () => {
    if (yaml !== null) return setYaml(null);
    try {
      setYaml((await api.scenario(entry.path)).text);
    } catch (err) {
      setYaml(`# could not read: ${(err as Error).message}`);
    }
  };
  return (
    <li className="scenario" data-testid="scenario" data-path={entry.path}>
      <div className="scenario-main">
        <div className="scenario-name">{entry.name}</div>
        <div className="scenario-path">
          {entry.path}
          {entry.outline && <span className="scenario-outline"> — {outlineText(entry.outline)}</span>}
        </div>
        {entry.description && <p className="scenario-description">{entry.description}</p>}
        {!entry.valid && entry.issues && (
          <ErrorNote error={new ApiError(400, 'This scenario is not valid', entry.issues)} />
        )}
        {yaml !== null && <pre className="yaml">{yaml}</pre>}
      </div>
      <div className="scenario-actions">
        <a className="btn ghost" href={href.compose(entry.path)} data-testid="edit-scenario">
          Edit
        </a>
        <button type="button" className="btn ghost" onClick={toggleYaml}>
          {yaml === null ? 'YAML' : 'Hide'}
        </button>
        <button
          type="button"
          className="btn primary"
          data-testid="run-scenario"
          disabled={!entry.valid || busy}
          onClick={() => onRun(entry)}
          title={
            !entry.valid
              ? 'Fix the scenario file first'
              : entry.outline?.sweep
                ? `Run ${entry.path}: one run per sweep value, in turn`
                : `Run ${entry.path}`
          }
        >
          ▶ Run
        </button>
      </div>
    </li>
  );
}

function WriteUpHead({
  info,
  busy,
  onReproduce,
}: {
  info: ReproductionInfo;
  busy: boolean;
  onReproduce: (quick: boolean) => void;
}) {
  return (
    <div className="writeup" data-testid="writeup">
      <div className="writeup-main">
        <div className="writeup-title" data-testid="writeup-title">
          {info.url ? (
            <a href={info.url} target="_blank" rel="noreferrer" data-testid="writeup-link">
              {info.title}
            </a>
          ) : (
            info.title
          )}
        </div>
        {info.setup && <p className="muted">Their setup: {info.setup}</p>}
        {info.error && <ErrorNote error={`published.yaml: ${info.error}`} />}
      </div>
      <ReproduceButtons
        estimate={info.estimate}
        disabled={busy || info.error !== undefined}
        onReproduce={onReproduce}
      >
        <a className="btn ghost" href={href.reproduction(info.folder)} data-testid="reproduction-results">
          Results
        </a>
      </ReproduceButtons>
    </div>
  );
}

/** The run going now, as the history says (null when none, or when the history cannot say). */
function runningNow(): Promise<RunListItem | null> {
  return api.runs({ status: 'running', limit: 1 }).then(
    (runs) => runs[0] ?? null,
    () => null,
  );
}

export function ScenariosPage() {
  const [entries, setEntries] = useState<ScenarioEntry[] | null>(null);
  const [loadError, setLoadError] = useState<Error | null>(null);
  const [runError, setRunError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [filter, setFilter] = useState('');

  const [running, setRunning] = useState<RunListItem | null>(null);
  /** Run even while another run is going (the API's concurrent: true); both runs are marked. */
  const [alongside, setAlongside] = useState(false);
  const [writeUps, setWriteUps] = useState<Map<string, ReproductionInfo>>(new Map());

  useEffect(() => {
    api.scenarios().then(setEntries, setLoadError);
    api.reproductions().then(
      (list) => setWriteUps(new Map(list.map((r) => [r.folder, r]))),
      () => {},
    );
    // One run at a time: say which one is going, so Run's refusal is no surprise.
    void runningNow().then(setRunning);
  }, []);

  const groups = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const shown = (entries ?? []).filter(
      (e) => !f || `${e.name} ${e.path} ${e.description}`.toLowerCase().includes(f),
    );
    return groupByFolder(shown);
  }, [entries, filter]);

  const run = async (entry: ScenarioEntry) => {
    setBusy(true);
    setRunError(null);
    try {
      const { id } = await api.startRun({ path: entry.path, ...(alongside ? { concurrent: true } : {}) });
      navigate(href.live(id));
    } catch (err) {
      setRunError(err instanceof ApiError ? err : new ApiError(0, (err as Error).message));
      // Refused because another run is going: show it, with the choice to run alongside anyway.
      if (err instanceof ApiError && err.status === 409) void runningNow().then(setRunning);
      setBusy(false);
    }
  };

  const reproduce = async (folder: string, quick: boolean) => {
    setBusy(true);
    setRunError(null);
    try {
      const started = await api.startReproduction({
        folder,
        quick,
        ...(alongside ? { concurrent: true } : {}),
      });
      navigate(href.reproduction(folder, started.tag));
    } catch (err) {
      setRunError(err instanceof ApiError ? err : new ApiError(0, (err as Error).message));
      if (err instanceof ApiError && err.status === 409) void runningNow().then(setRunning);
      setBusy(false);
    }
  };

  if (loadError) return <ErrorNote error={loadError} />;
  if (entries === null) return <p className="muted">Loading scenarios…</p>;
  if (entries.length === 0) {
    return (
      <Empty title="No scenarios yet" testId="scenarios-empty">
        <p>
          Scenarios are YAML files in the <code>scenarios/</code> folder of the workbench, one folder per
          published benchmark. Add a file such as <code>scenarios/my-test.yaml</code>:
        </p>
        <pre className="yaml">
          {'name: my first test\nduration: 30s\nproducers: { count: 1 }\nconsumers: { count: 1 }\n'}
        </pre>
        <p>
          then reload this page, or run it headless with <code>npx kbench run scenarios/my-test.yaml</code>.
        </p>
      </Empty>
    );
  }

  return (
    <div data-testid="scenarios-page">
      <div className="page-head">
        <h1>Scenarios</h1>
        <input
          className="search"
          type="search"
          placeholder="Filter scenarios"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
      </div>
      {running && (
        <div className="notice" data-testid="running-notice">
          <strong>{running.name}</strong> is running (started {formatDateTime(running.startedAt)}).{' '}
          <a href={href.live(running.id)}>Watch it live →</a>
          <label className="inline alongside">
            <input
              type="checkbox"
              checked={alongside}
              onChange={(e) => setAlongside(e.target.checked)}
              data-testid="run-alongside"
            />{' '}
            Run alongside it anyway: both runs share this machine, so neither measures a run alone, and both
            are marked so
          </label>
        </div>
      )}
      {runError && <ErrorNote error={runError} />}
      {groups.map(([folder, list]) => (
        <section key={folder || '.'} className="folder" data-testid="scenario-folder" data-folder={folder}>
          <h2 className="folder-title">{folder ? `${folder}/` : 'Quick start'}</h2>
          {writeUps.has(folder) && (
            <WriteUpHead
              info={writeUps.get(folder) as ReproductionInfo}
              busy={busy}
              onReproduce={(quick) => reproduce(folder, quick)}
            />
          )}
          <ul className="scenario-list">
            {list.map((e) => (
              <ScenarioCard key={e.path} entry={e} onRun={run} busy={busy} />
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}
