// The composer's YAML: the draft as text, edited freely (the form follows), and saved under a file
// name into the scenario library.
import { useState } from 'react';
import { ApiError, api } from '../../api';
import { Panel } from '../../components/bits';

export function YamlPanel({
  opened,
  yamlText,
  yamlError,
  ready,
  onEdit,
  onSaved,
  onError,
}: {
  /** The file the page opened, whose name is the one to save under at first. */
  opened: string | null;
  yamlText: string;
  yamlError: string | null;
  /** The scenario is valid and its YAML parses. */
  ready: boolean;
  onEdit: (text: string) => void;
  /** The draft was saved as `path`, with this text. */
  onSaved: (path: string, text: string) => void;
  /** Why saving failed (null: cleared as saving begins). */
  onError: (err: Error | null) => void;
}) {
  const [fileName, setFileName] = useState(
    opened ? (opened.split('/').pop() ?? '').replace(/\.(ya?ml|json)$/, '') : 'my-scenario',
  );
  const [message, setMessage] = useState<string | null>(null);

  const save = async (overwrite = false) => {
    onError(null);
    setMessage(null);
    try {
      const { path } = await api.saveScenario({ file: fileName, yaml: yamlText, overwrite });
      setMessage(`Saved as ${path}; it is listed under Scenarios.`);
      onSaved(path, yamlText);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && window.confirm(`${err.message}. Replace it?`))
        return save(true);
      onError(err as Error);
    }
  };

  return (
    <Panel title="YAML">
      <textarea
        className="yaml"
        spellCheck={false}
        value={yamlText}
        onChange={(e) => onEdit(e.target.value)}
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
          disabled={!ready}
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
  );
}
