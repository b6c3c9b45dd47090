// The composer's sweep: a knob and its values, one run per value when the scenario is launched.
import { knobPaths } from '@kbench/schema';
import { Panel } from '../../components/bits';

export type Sweep = { knob?: string; values?: unknown[] };

export function SweepPanel({
  sweep,
  onChange,
}: {
  sweep: Sweep | undefined;
  /** The scenario's new `sweep` (undefined: none). */
  onChange: (sweep: Sweep | undefined) => void;
}) {
  return (
    <Panel title="Sweep (one run per value)">
      <div className="fields">
        <div className="field">
          <label htmlFor="sweep-knob">Knob</label>
          <select
            id="sweep-knob"
            value={sweep?.knob ?? ''}
            onChange={(e) =>
              onChange(e.target.value ? { knob: e.target.value, values: sweep?.values ?? [] } : undefined)
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
                onChange({
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
              Comma-separated; each value is checked against the knob. Launch runs one run per value, in turn.
            </div>
          </div>
        )}
      </div>
    </Panel>
  );
}
