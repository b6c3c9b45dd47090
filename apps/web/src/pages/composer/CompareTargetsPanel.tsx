// The composer's comparison of targets: pick two or more, and the scenario runs on each in turn (a
// sweep over `target`), then the live page opens the comparison.
import { useState } from 'react';
import { Panel } from '../../components/bits';

export function CompareTargetsPanel({
  targets,
  ready,
  sweeping,
  onCompare,
}: {
  /** The targets to pick from: the built-in ones and the saved profiles. */
  targets: string[];
  /** The scenario is valid and its YAML parses. */
  ready: boolean;
  /** The scenario has a sweep of its own (a comparison of targets is itself one). */
  sweeping: boolean;
  onCompare: (targets: string[]) => void;
}) {
  const [compared, setCompared] = useState<string[]>([]);
  return (
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
                    setCompared((list) => (e.target.checked ? [...list, t] : list.filter((x) => x !== t)))
                  }
                />{' '}
                {t}
              </label>
            ))}
          </div>
          <div className="help">
            Runs this scenario on each target in turn, then opens the comparison. Profiles are added with
            kbench profile add.
          </div>
        </div>
        <button
          type="button"
          className="btn"
          disabled={!ready || compared.length < 2 || sweeping}
          title={sweeping ? 'Remove the sweep first: a comparison of targets is itself a sweep' : undefined}
          onClick={() => onCompare(compared)}
          data-testid="compare-targets-launch"
        >
          ▶ Compare {compared.length >= 2 ? `${compared.length} targets` : 'targets'}
        </button>
      </div>
    </Panel>
  );
}
