// The composer: a form generated from the scenario schema's field catalogue, with the YAML beside
// it, kept in sync both ways, and the same validation messages the CLI prints.
import {
  checkScenario,
  FAULT_ACTION_OPTIONS,
  FIELD_GROUPS,
  FIELD_INFO,
  type FieldInfo,
  formatDurationMs,
  knobPaths,
  parseDurationMs,
  parseScenario,
  readScenarioText,
  type ScenarioIssue,
  scenarioToYaml,
  setKnob,
} from '@kbench/schema';
import { useEffect, useMemo, useState } from 'react';
import { ApiError, api } from '../api';
import { ErrorNote, Panel } from '../components/bits';
import { href, navigate } from '../router';

type Raw = Record<string, unknown>;

const STARTER: Raw = {
  name: 'my scenario',
  duration: '30s',
  warmup: '5s',
  topics: { partitions: 3 },
  producers: { count: 1, acks: 1, messageSize: 100 },
  consumers: { count: 1 },
};

const DEFAULTS = parseScenario({}) as unknown as Raw;

function valueAt(obj: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Raw)[key] : undefined), obj);
}

function withoutKnob(raw: Raw, path: string): Raw {
  const copy = structuredClone(raw);
  const parts = path.split('.');
  const parent = valueAt(copy, parts.slice(0, -1).join('.'));
  const target = parts.length === 1 ? copy : parent;
  if (target && typeof target === 'object') delete (target as Raw)[parts.at(-1) as string];
  return copy;
}

/** Text typed into a field, as the value the YAML should hold. */
function fromInput(info: FieldInfo, text: string): unknown {
  const trimmed = text.trim();
  if (info.kind === 'integer' || info.kind === 'number')
    return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
  if (info.kind === 'enum') {
    const option = info.options?.find((o) => String(o) === trimmed);
    return option ?? trimmed;
  }
  if (info.kind === 'size' && /^\d+$/.test(trimmed)) return Number(trimmed);
  return text;
}

function toInput(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function issuesFor(issues: ScenarioIssue[], path: string): ScenarioIssue[] {
  return issues.filter(
    (i) => i.path === path || i.path.startsWith(`${path}.`) || i.path.startsWith(`${path}[`),
  );
}

const FAULT_COLUMNS = ['at', 'action', 'node', 'for'] as const;

/**
 * Where a new fault goes: the middle of the measured phase (faults count from the start of load,
 * warm-up included), so its effect shows in the figures. A run bounded by records has no known
 * length: a second after warm-up then.
 */
function newFaultAt(raw: Raw): string {
  const warmupMs = parseDurationMs(raw.warmup ?? DEFAULTS.warmup) ?? 0;
  const durationMs =
    raw.records === undefined ? parseDurationMs(raw.duration ?? DEFAULTS.duration) : undefined;
  if (durationMs === undefined || durationMs <= warmupMs) return formatDurationMs(warmupMs + 1000);
  const at = warmupMs + (durationMs - warmupMs) / 2;
  return formatDurationMs(at >= 2000 ? Math.round(at / 1000) * 1000 : Math.round(at));
}

/** The faults timeline, one row per fault; every edit writes the whole list back through onChange. */
function FaultRows({
  value,
  raw,
  issues,
  onChange,
}: {
  value: unknown;
  /** The whole scenario, for a new fault's time. */
  raw: Raw;
  issues: ScenarioIssue[];
  onChange: (path: string, value: unknown) => void;
}) {
  if (value !== undefined && !Array.isArray(value))
    return <div className="help">Not a list; edit the faults in the YAML.</div>;
  const rows = ((value as unknown[] | undefined) ?? []).map((r) =>
    r && typeof r === 'object' && !Array.isArray(r) ? (r as Raw) : {},
  );
  const write = (next: Raw[]) => onChange('faults', next.length ? next : undefined);
  const edit = (index: number, key: string, text: string) => {
    const row: Raw = { ...rows[index] };
    let v: unknown = text;
    if (key === 'node' && /^\d+$/.test(text.trim())) v = Number(text.trim());
    if (text === '') delete row[key];
    else row[key] = v;
    if (key === 'action' && text !== 'pause') delete row.for;
    write(rows.map((r, i) => (i === index ? row : r)));
  };
  const cell = (index: number, key: string, input: React.ReactNode) => {
    const own = issues.filter((i) => i.path === `faults[${index}].${key}`);
    return (
      <div className={`field${own.length ? ' invalid' : ''}`} data-testid={`fault-${index}-${key}`}>
        {input}
        {own.map((i) => (
          <div key={i.message} className="field-error" data-testid="field-error">
            {i.path}: {i.message}
          </div>
        ))}
      </div>
    );
  };
  return (
    <div className="fault-rows">
      {rows.length > 0 && (
        <div className="fault-row fault-head">
          {FAULT_COLUMNS.map((key) => (
            <span key={key} data-testid={`fault-head-${key}`}>
              {key}
            </span>
          ))}
          <span />
        </div>
      )}
      {rows.map((row, index) => {
        const rowIssues = issues.filter((i) => i.path === `faults[${index}]`);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place in the list
          <div key={index} data-testid={`fault-${index}`}>
            <div className="fault-row">
              {cell(
                index,
                'at',
                <input
                  aria-label={`Fault ${index + 1} at`}
                  value={toInput(row.at)}
                  placeholder="30s"
                  onChange={(e) => edit(index, 'at', e.target.value)}
                />,
              )}
              {cell(
                index,
                'action',
                <select
                  aria-label={`Fault ${index + 1} action`}
                  value={toInput(row.action)}
                  onChange={(e) => edit(index, 'action', e.target.value)}
                >
                  <option value="">choose…</option>
                  {FAULT_ACTION_OPTIONS.map((a) => (
                    <option key={a} value={a}>
                      {a}
                    </option>
                  ))}
                </select>,
              )}
              {cell(
                index,
                'node',
                <input
                  aria-label={`Fault ${index + 1} node`}
                  value={toInput(row.node)}
                  placeholder="1 or leader:topic-0"
                  onChange={(e) => edit(index, 'node', e.target.value)}
                />,
              )}
              {cell(
                index,
                'for',
                <input
                  aria-label={`Fault ${index + 1} for`}
                  value={toInput(row.for)}
                  placeholder={row.action === 'pause' ? '1s' : 'pause only'}
                  disabled={row.action !== 'pause' && row.for === undefined}
                  onChange={(e) => edit(index, 'for', e.target.value)}
                />,
              )}
              <button
                type="button"
                className="btn ghost fault-remove"
                title="Remove this fault"
                data-testid={`fault-${index}-remove`}
                onClick={() => write(rows.filter((_, i) => i !== index))}
              >
                ✕
              </button>
            </div>
            {rowIssues.map((i) => (
              <div key={i.message} className="field-error" data-testid="field-error">
                {i.path}: {i.message}
              </div>
            ))}
          </div>
        );
      })}
      <div>
        <button
          type="button"
          className="btn"
          data-testid="fault-add"
          onClick={() => write([...rows, { at: newFaultAt(raw), action: 'kill', node: 1 }])}
        >
          + Add fault
        </button>
      </div>
    </div>
  );
}

function Field({
  info,
  raw,
  issues,
  onChange,
}: {
  info: FieldInfo;
  raw: Raw;
  issues: ScenarioIssue[];
  onChange: (path: string, value: unknown) => void;
}) {
  const value = valueAt(raw, info.path);
  const placeholder = toInput(valueAt(DEFAULTS, info.path));
  const own = issuesFor(issues, info.path);
  const id = `field-${info.path}`;
  const [jsonText, setJsonText] = useState(toInput(value));
  const [jsonError, setJsonError] = useState<string | null>(null);
  useEffect(() => setJsonText(toInput(value)), [value]);
  let input: React.ReactNode;
  if (info.path === 'faults') {
    input = <FaultRows value={value} raw={raw} issues={own} onChange={onChange} />;
  } else if (info.kind === 'enum') {
    input = (
      <select
        id={id}
        value={value === undefined ? '' : String(value)}
        onChange={(e) =>
          onChange(info.path, e.target.value === '' ? undefined : fromInput(info, e.target.value))
        }
      >
        <option value="">default ({placeholder})</option>
        {info.options?.map((o) => (
          <option key={String(o)} value={String(o)}>
            {String(o)}
          </option>
        ))}
      </select>
    );
  } else if (info.kind === 'boolean') {
    input = (
      <input
        id={id}
        type="checkbox"
        checked={value === true || value === 'true'}
        onChange={(e) => onChange(info.path, e.target.checked)}
      />
    );
  } else if (info.kind === 'longtext') {
    input = (
      <textarea
        id={id}
        rows={3}
        value={toInput(value)}
        placeholder={placeholder}
        onChange={(e) => onChange(info.path, e.target.value || undefined)}
      />
    );
  } else if (info.kind === 'json') {
    input = (
      <input
        id={id}
        value={jsonText}
        placeholder={placeholder}
        onChange={(e) => {
          setJsonText(e.target.value);
          if (e.target.value.trim() === '') {
            setJsonError(null);
            onChange(info.path, undefined);
            return;
          }
          try {
            onChange(info.path, readScenarioText(e.target.value));
            setJsonError(null);
          } catch {
            setJsonError('not valid YAML or JSON yet');
          }
        }}
      />
    );
  } else {
    input = (
      <input
        id={id}
        value={toInput(value)}
        placeholder={placeholder}
        list={info.examples ? `${id}-examples` : undefined}
        onChange={(e) =>
          onChange(info.path, e.target.value === '' ? undefined : fromInput(info, e.target.value))
        }
      />
    );
  }
  return (
    <div
      className={`field${info.path === 'faults' ? ' wide' : own.length || jsonError ? ' invalid' : ''}`}
      data-testid={id}
    >
      <label htmlFor={id}>{info.label}</label>
      {input}
      {info.examples && (
        <datalist id={`${id}-examples`}>
          {info.examples.map((e) => (
            <option key={e} value={e} />
          ))}
        </datalist>
      )}
      <div className="help">{info.help}</div>
      {jsonError && <div className="field-error">{jsonError}</div>}
      {own
        .filter((i) => info.path !== 'faults' || !i.path.startsWith('faults['))
        .map((i) => (
          <div key={i.path + i.message} className="field-error" data-testid="field-error">
            {i.path}: {i.message}
          </div>
        ))}
    </div>
  );
}

export function ComposerPage({ from }: { from: string | null }) {
  const [raw, setRaw] = useState<Raw>(STARTER);
  const [yamlText, setYamlText] = useState(() => scenarioToYaml(STARTER));
  const [yamlError, setYamlError] = useState<string | null>(null);
  const [advanced, setAdvanced] = useState(false);
  /** Run even while another run is going (the API's concurrent: true). */
  const [alongside, setAlongside] = useState(false);
  const [fileName, setFileName] = useState(
    from ? (from.split('/').pop() ?? '').replace(/\.(ya?ml|json)$/, '') : 'my-scenario',
  );
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<Error | string | null>(null);
  const [serverIssues, setServerIssues] = useState<ScenarioIssue[]>([]);

  // The file this draft edits: the one opened, then the one last saved as ("Save as").
  const [file, setFile] = useState(from);
  // A draft survives leaving the page (to watch a run) until Reset.
  const draftKey = `kbench-composer:${file ?? ''}`;
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const load = (text: string) => {
      setYamlText(text);
      try {
        setRaw(readScenarioText(text) as Raw);
        setYamlError(null);
      } catch (err) {
        setYamlError((err as Error).message);
      }
    };
    const draft = window.sessionStorage.getItem(draftKey);
    if (draft !== null && generation === 0) load(draft);
    else if (file) api.scenario(file).then((opened) => load(opened.text), setError);
    else load(scenarioToYaml(STARTER));
  }, [file, draftKey, generation]);
  useEffect(() => window.sessionStorage.setItem(draftKey, yamlText), [draftKey, yamlText]);
  const reset = () => {
    window.sessionStorage.removeItem(draftKey);
    setServerIssues([]);
    setGeneration((g) => g + 1);
  };

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
  const [compared, setCompared] = useState<string[]>([]);

  const checked = useMemo(() => checkScenario(raw), [raw]);
  // While the YAML does not parse, the form keeps its last good parse: that parse's issues are stale.
  const issues = yamlError !== null ? [] : checked.ok ? serverIssues : checked.issues;

  const change = (path: string, value: unknown) => {
    const next = value === undefined ? withoutKnob(raw, path) : setKnob(raw, path, value);
    setRaw(next);
    setYamlText(scenarioToYaml(next));
    setYamlError(null);
    setServerIssues([]);
  };

  const editYaml = (text: string) => {
    setYamlText(text);
    try {
      const value = readScenarioText(text);
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw new Error('a scenario must be an object of fields');
      setRaw(value as Raw);
      setYamlError(null);
      setServerIssues([]);
    } catch (err) {
      setYamlError((err as Error).message.replace(/^.*invalid scenario\n\s*/s, ''));
    }
  };

  const launch = async () => {
    setError(null);
    try {
      const { id } = await api.startRun({ scenario: raw, ...(alongside ? { concurrent: true } : {}) });
      navigate(href.live(id));
    } catch (err) {
      if (err instanceof ApiError && err.issues.length) setServerIssues(err.issues);
      setError(err as Error);
    }
  };

  /** One run per selected target, in turn (a sweep over target); the live page opens the comparison. */
  const compareTargets = async () => {
    setError(null);
    try {
      const { id } = await api.startRun({
        scenario: { ...raw, sweep: { knob: 'target', values: compared } },
        ...(alongside ? { concurrent: true } : {}),
      });
      navigate(href.live(id));
    } catch (err) {
      if (err instanceof ApiError && err.issues.length) setServerIssues(err.issues);
      setError(err as Error);
    }
  };

  const save = async (overwrite = false) => {
    setError(null);
    setMessage(null);
    try {
      const { path } = await api.saveScenario({ file: fileName, yaml: yamlText, overwrite });
      setMessage(`Saved as ${path}; it is listed under Scenarios.`);
      // From now on the draft edits the saved file: its title, its address (a reload opens it), Reset.
      window.sessionStorage.setItem(`kbench-composer:${path}`, yamlText);
      window.history.replaceState(null, '', href.compose(path));
      setFile(path);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && window.confirm(`${err.message}. Replace it?`))
        return save(true);
      setError(err as Error);
    }
  };

  const sweep = raw.sweep as { knob?: string; values?: unknown[] } | undefined;
  return (
    <div data-testid="composer-page">
      <div className="page-head">
        <h1 data-testid="composer-title">Composer{file ? `: ${file}` : ''}</h1>
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
            onClick={reset}
            data-testid="composer-reset"
            title="Discard changes"
          >
            Reset
          </button>
          <button
            type="button"
            className="btn primary"
            disabled={!checked.ok || yamlError !== null}
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
                    <Field key={info.path} info={info} raw={raw} issues={issues} onChange={change} />
                  ))}
                </div>
              </Panel>
            );
          })}
          <Panel title="Sweep (one run per value)">
            <div className="fields">
              <div className="field">
                <label htmlFor="sweep-knob">Knob</label>
                <select
                  id="sweep-knob"
                  value={sweep?.knob ?? ''}
                  onChange={(e) =>
                    change(
                      'sweep',
                      e.target.value ? { knob: e.target.value, values: sweep?.values ?? [] } : undefined,
                    )
                  }
                >
                  <option value="">no sweep</option>
                  {knobPaths().map((k) => (
                    <option key={k} value={k}>
                      {k}
                    </option>
                  ))}
                </select>
              </div>
              {sweep && (
                <div className="field">
                  <label htmlFor="sweep-values">Values</label>
                  <input
                    id="sweep-values"
                    defaultValue={(sweep.values ?? []).map(String).join(', ')}
                    placeholder="10, 100, 1000"
                    onChange={(e) =>
                      change('sweep', {
                        knob: sweep.knob,
                        values: e.target.value
                          .split(',')
                          .map((v) => v.trim())
                          .filter(Boolean)
                          .map((v) => (/^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v)),
                      })
                    }
                  />
                  <div className="help">
                    Comma-separated; each value is checked against the knob. Launch runs one run per value, in
                    turn.
                  </div>
                </div>
              )}
            </div>
          </Panel>
          <Panel title="Compare targets">
            <div className="fields" data-testid="compare-targets">
              <div className="field">
                <div className="target-choices">
                  {targets.map((t) => (
                    <label key={t} className="inline">
                      <input
                        type="checkbox"
                        checked={compared.includes(t)}
                        data-testid={`compare-target-${t}`}
                        onChange={(e) =>
                          setCompared((list) =>
                            e.target.checked ? [...list, t] : list.filter((x) => x !== t),
                          )
                        }
                      />{' '}
                      {t}
                    </label>
                  ))}
                </div>
                <div className="help">
                  Runs this scenario on each target in turn, then opens the comparison. Profiles are added
                  with kbench profile add.
                </div>
              </div>
              <button
                type="button"
                className="btn"
                disabled={!checked.ok || yamlError !== null || compared.length < 2 || Boolean(sweep)}
                title={
                  sweep ? 'Remove the sweep first: a comparison of targets is itself a sweep' : undefined
                }
                onClick={compareTargets}
                data-testid="compare-targets-launch"
              >
                ▶ Compare {compared.length >= 2 ? `${compared.length} targets` : 'targets'}
              </button>
            </div>
          </Panel>
        </div>
        <div className="composer-yaml">
          <Panel title="YAML">
            <textarea
              className="yaml"
              spellCheck={false}
              value={yamlText}
              onChange={(e) => editYaml(e.target.value)}
              data-testid="composer-yaml"
              rows={32}
            />
            {yamlError && (
              <div className="field-error" data-testid="yaml-error">
                {yamlError}
              </div>
            )}
            <div className="save-row">
              <input
                value={fileName}
                onChange={(e) => setFileName(e.target.value)}
                aria-label="File name"
                data-testid="composer-file"
              />
              <span className="muted">.yaml</span>
              <button
                type="button"
                className="btn"
                onClick={() => save()}
                disabled={!checked.ok || yamlError !== null}
                data-testid="composer-save"
              >
                Save
              </button>
            </div>
            {message && (
              <p className="muted" data-testid="composer-saved">
                {message}
              </p>
            )}
          </Panel>
        </div>
      </div>
    </div>
  );
}
