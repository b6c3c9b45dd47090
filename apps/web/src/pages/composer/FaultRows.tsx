// The composer's fault timeline: one row per fault (at, action, node, for, and under them the
// action's own fields: isolate's from, slow-disk's delay, a command's run and timeout), added,
// edited and removed in place; every edit writes the whole list back to the scenario's `faults`.
import {
  FAULT_ACTION_OPTIONS,
  formatDurationMs,
  ISOLATE_FROM,
  NODE_FAULT_ACTIONS,
  parseDurationMs,
  type ScenarioIssue,
} from '@kbench/schema';
import { DEFAULTS, type Raw, toInput } from './knobs';

const FAULT_COLUMNS = ['at', 'action', 'node', 'for'] as const;
/** The actions that take `for` (pause needs it). */
const LASTING = ['pause', 'isolate', 'slow-disk'];
/** Each action's own fields, under its row: a list of choices, or a typed value with an example. */
const EXTRA_FIELDS: Record<string, { key: string; placeholder?: string; options?: readonly string[] }[]> = {
  isolate: [{ key: 'from', options: ISOLATE_FROM }],
  'slow-disk': [{ key: 'delay', placeholder: '5ms' }],
  command: [
    { key: 'run', placeholder: 'kubectl delete pod kafka-1' },
    { key: 'timeout', placeholder: '60s' },
  ],
};
const onNode = (action: unknown) => (NODE_FAULT_ACTIONS as readonly unknown[]).includes(action);

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
export function FaultRows({
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
    if (key === 'action') {
      // What the new action does not take goes, so the row stays valid as far as it can.
      if (!LASTING.includes(text)) delete row.for;
      if (!onNode(text)) delete row.node;
      const own = new Set((EXTRA_FIELDS[text] ?? []).map((f) => f.key));
      for (const k of ['from', 'delay', 'run', 'timeout']) if (!own.has(k)) delete row[k];
    }
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
  /** A cell whose value is typed (at, node, for). */
  const typed = (index: number, row: Raw, key: string, placeholder: string, disabled?: boolean) =>
    cell(
      index,
      key,
      <input
        aria-label={`Fault ${index + 1} ${key}`}
        value={toInput(row[key])}
        placeholder={placeholder}
        disabled={disabled}
        onChange={(e) => edit(index, key, e.target.value)}
      />,
    );
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
              {typed(index, row, 'at', '30s')}
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
              {typed(
                index,
                row,
                'node',
                onNode(row.action) || row.action === undefined ? '1 or leader:topic-0' : 'no node',
                !onNode(row.action) && row.action !== undefined && row.node === undefined,
              )}
              {typed(
                index,
                row,
                'for',
                row.action === 'pause'
                  ? '1s'
                  : LASTING.includes(String(row.action))
                    ? 'until heal'
                    : 'no for',
                !LASTING.includes(String(row.action)) && row.for === undefined,
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
            {(EXTRA_FIELDS[String(row.action)] ?? []).length > 0 && (
              <div className="fault-extra" data-testid={`fault-${index}-extra`}>
                {(EXTRA_FIELDS[String(row.action)] ?? []).map((f) => (
                  <div key={f.key} className={`fault-extra-${f.key}`}>
                    <span>{f.key}</span>
                    {f.options
                      ? cell(
                          index,
                          f.key,
                          <select
                            aria-label={`Fault ${index + 1} ${f.key}`}
                            value={toInput(row[f.key])}
                            onChange={(e) => edit(index, f.key, e.target.value)}
                          >
                            <option value="">{f.options[0]} (default)</option>
                            {f.options.map((o) => (
                              <option key={o} value={o}>
                                {o}
                              </option>
                            ))}
                          </select>,
                        )
                      : typed(index, row, f.key, f.placeholder ?? '')}
                  </div>
                ))}
              </div>
            )}
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
