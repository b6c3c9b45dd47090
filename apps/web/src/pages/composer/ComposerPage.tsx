// The composer: a form generated from the scenario schema's field catalogue, with the YAML beside
// it, kept in sync both ways, and the same validation messages the CLI prints. This file lays out the
// page and launches runs; the draft, the panels and the fields are its neighbours.
import { FIELD_GROUPS, FIELD_INFO } from '@kbench/schema';
import { useEffect, useMemo, useState } from 'react';
import { ApiError, api } from '../../api';
import { ErrorNote, Panel } from '../../components/bits';
import { href, navigate } from '../../router';
import { CompareTargetsPanel } from './CompareTargetsPanel';
import { Field } from './Field';
import type { Raw } from './knobs';
import { type Sweep, SweepPanel } from './SweepPanel';
import { useDraft } from './useDraft';
import { YamlPanel } from './YamlPanel';

export function ComposerPage({ from }: { from: string | null }) {
  const [error, setError] = useState<Error | string | null>(null);
  const draft = useDraft(from, setError);
  const [advanced, setAdvanced] = useState(false);
  /** Run even while another run is going (the API's concurrent: true). */
  const [alongside, setAlongside] = useState(false);

  // Targets to pick from: the built-in ones and the saved profiles.
  const [targets, setTargets] = useState<string[]>(['bundled', 'kafka']);
  useEffect(() => {
    api.profiles().then(
      (profiles) => setTargets(['bundled', 'kafka', ...profiles.map((p) => p.name)]),
      () => {},
    );
  }, []);
  const fields = useMemo(
    () =>
      FIELD_INFO.map((f) => (f.path === 'target' ? { ...f, examples: [...targets, '127.0.0.1:9092'] } : f)),
    [targets],
  );

  /** Starts the scenario (one run, or one per sweep value in turn) and opens its live page. */
  const start = async (scenario: Raw) => {
    setError(null);
    try {
      const { id } = await api.startRun({ scenario, ...(alongside ? { concurrent: true } : {}) });
      navigate(href.live(id));
    } catch (err) {
      if (err instanceof ApiError && err.issues.length) draft.rejected(err.issues);
      setError(err as Error);
    }
  };
  const launch = () => start(draft.raw);
  /** One run per selected target, in turn (a sweep over target); the live page opens the comparison. */
  const compareTargets = (compared: string[]) =>
    start({ ...draft.raw, sweep: { knob: 'target', values: compared } });

  const { issues, yamlError } = draft;
  const sweep = draft.raw.sweep as Sweep | undefined;
  return (
    <div data-testid="composer-page">
      <div className="page-head">
        <h1 data-testid="composer-title">Composer{draft.file ? `: ${draft.file}` : ''}</h1>
        <div className="filters">
          <label className="inline">
            <input type="checkbox" checked={advanced} onChange={(e) => setAdvanced(e.target.checked)} /> all
            knobs
          </label>
          <label
            className="inline"
            title="Run even while another run is going on this machine; both runs are marked, since neither measures a run alone"
          >
            <input
              type="checkbox"
              checked={alongside}
              onChange={(e) => setAlongside(e.target.checked)}
              data-testid="composer-concurrent"
            />{' '}
            alongside a running run
          </label>
          <button
            type="button"
            className="btn ghost"
            onClick={draft.reset}
            data-testid="composer-reset"
            title="Discard changes"
          >
            Reset
          </button>
          <button
            type="button"
            className="btn primary"
            disabled={!draft.ready}
            onClick={launch}
            data-testid="composer-launch"
            title={sweep ? 'Run one scenario per sweep value, in turn' : 'Run this scenario now'}
          >
            ▶ Launch
          </button>
        </div>
      </div>
      {error && <ErrorNote error={error} />}
      {(issues.length > 0 || yamlError !== null) && (
        <div className="issues" data-testid="composer-issues">
          {yamlError !== null && (
            <div>
              <code>YAML</code>: {yamlError}
            </div>
          )}
          {issues.map((i) => (
            <div key={i.path + i.message}>
              <code>{i.path || '(scenario)'}</code>: {i.message}
            </div>
          ))}
        </div>
      )}
      <div className="composer">
        <div className="composer-form">
          {FIELD_GROUPS.map((group) => {
            const shown = fields.filter(
              (f) =>
                (group.prefix ? f.path.startsWith(`${group.prefix}.`) : !f.path.includes('.')) &&
                (advanced || !f.advanced),
            );
            if (shown.length === 0) return null;
            return (
              <Panel
                key={group.title}
                title={group.title}
                testId={`composer-group-${group.prefix || 'scenario'}`}
              >
                <div className="fields">
                  {shown.map((info) => (
                    <Field
                      key={info.path}
                      info={info}
                      raw={draft.raw}
                      issues={issues}
                      onChange={draft.change}
                    />
                  ))}
                </div>
              </Panel>
            );
          })}
          <SweepPanel sweep={sweep} onChange={(next) => draft.change('sweep', next)} />
          <CompareTargetsPanel
            targets={targets}
            ready={draft.ready}
            sweeping={Boolean(sweep)}
            onCompare={compareTargets}
          />
        </div>
        <div className="composer-yaml">
          <YamlPanel
            opened={from}
            yamlText={draft.yamlText}
            yamlError={yamlError}
            ready={draft.ready}
            onEdit={draft.editYaml}
            onSaved={draft.savedAs}
            onError={setError}
          />
        </div>
      </div>
    </div>
  );
}
