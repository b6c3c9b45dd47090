// One knob of the composer's form, drawn by its kind in the schema's field catalogue (choice, checkbox,
// text, JSON), with its default as placeholder, its help and its issues.
import { type FieldInfo, readScenarioText, type ScenarioIssue } from '@kbench/schema';
import { useEffect, useState } from 'react';
import { FaultRows } from './FaultRows';
import { DEFAULTS, fromInput, issuesFor, type Raw, toInput, valueAt } from './knobs';

export function Field({
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
