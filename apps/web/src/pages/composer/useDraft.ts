// The composer's draft: the scenario being edited, as the form's object and as YAML text kept in sync
// both ways, with its issues. It survives leaving the page (to watch a run) until Reset, and follows
// the file it edits: the one opened, then the one last saved as ("Save as").
import { checkScenario, readScenarioText, type ScenarioIssue, scenarioToYaml, setKnob } from '@kbench/schema';
import { useEffect, useMemo, useState } from 'react';
import { api } from '../../api';
import { href } from '../../router';
import { type Raw, withoutKnob } from './knobs';

const STARTER: Raw = {
  name: 'my scenario',
  duration: '30s',
  warmup: '5s',
  topics: { partitions: 3 },
  producers: { count: 1, acks: 1, messageSize: 100 },
  consumers: { count: 1 },
};

/**
 * The draft of the scenario file `from` (null: a new scenario). `onError` hears why the file could not
 * be opened; pass a stable function (a state setter), since opening runs again when it changes.
 */
export function useDraft(from: string | null, onError: (err: Error) => void) {
  // A file's text arrives from the server: until then the draft is empty, not the starter scenario,
  // so nothing can save or launch the starter under the file's name.
  const [raw, setRaw] = useState<Raw>(from === null ? STARTER : {});
  const [yamlText, setYamlText] = useState(() => (from === null ? scenarioToYaml(STARTER) : ''));
  const [yamlError, setYamlError] = useState<string | null>(null);
  /** What the server found wrong with the last launch, until the next edit. */
  const [serverIssues, setServerIssues] = useState<ScenarioIssue[]>([]);

  const [file, setFile] = useState(from);
  const draftKey = `kbench-composer:${file ?? ''}`;
  const [generation, setGeneration] = useState(0);
  /** The draft key whose text is in the draft (null while it loads). */
  const [loadedKey, setLoadedKey] = useState<string | null>(null);
  const loaded = loadedKey === draftKey;
  useEffect(() => {
    const load = (text: string) => {
      setLoadedKey(draftKey);
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
    else if (file) api.scenario(file).then((opened) => load(opened.text), onError);
    else load(scenarioToYaml(STARTER));
  }, [file, draftKey, generation, onError]);
  useEffect(() => {
    if (loaded) window.sessionStorage.setItem(draftKey, yamlText);
  }, [loaded, draftKey, yamlText]);

  /** Discards the changes: the file as saved, or the starter scenario. */
  const reset = () => {
    window.sessionStorage.removeItem(draftKey);
    setLoadedKey(null);
    setServerIssues([]);
    setGeneration((g) => g + 1);
  };

  const checked = useMemo(() => checkScenario(raw), [raw]);
  // While the YAML does not parse, the form keeps its last good parse: that parse's issues are stale.
  const issues = !loaded || yamlError !== null ? [] : checked.ok ? serverIssues : checked.issues;

  /** A knob set from the form (undefined: removed, so its default applies). */
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

  /** From now on the draft edits the saved file: its title, its address (a reload opens it), Reset. */
  const savedAs = (path: string, text: string) => {
    window.sessionStorage.setItem(`kbench-composer:${path}`, text);
    window.history.replaceState(null, '', href.compose(path));
    setFile(path);
  };

  return {
    /** The file this draft edits, if any. */
    file,
    raw,
    yamlText,
    /** Why the YAML text does not parse (the form then shows its last good parse). */
    yamlError,
    /** Whether the draft can be launched or saved: its file's text loaded, valid, and its YAML parses. */
    ready: loaded && checked.ok && yamlError === null,
    issues,
    change,
    editYaml,
    reset,
    /** Issues the server found in a launch, shown on the form until the next edit. */
    rejected: setServerIssues,
    savedAs,
  };
}
