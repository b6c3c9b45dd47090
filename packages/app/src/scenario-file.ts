// A scenario as a user names it: a file's text, or a raw object, with the caller's overrides
// (--set, --target, --keep-topics, --quick) applied before it is validated. The CLI's `run`,
// `sweep` and `reproduce`, and the server's runs and reproductions, all load scenarios here.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  applySet,
  checkScenario,
  fileErrorText,
  quickVersion,
  readScenarioText,
  resolvePayloadFile,
  type Scenario,
  ScenarioError,
  setKnob,
} from '@kbench/schema';

/** What a caller changes in a scenario before it is validated. */
export interface ScenarioOverrides {
  /** `knob.path=<yaml value>` assignments, in order (`--set`). */
  set?: string[];
  /** The target to run on, replacing the file's (`--target`). */
  target?: string;
  /** Keep the run's topics afterwards (`--keep-topics`). */
  keepTopics?: boolean;
  /** Shorten the scenario to seconds of measurement (`--quick`). */
  quick?: boolean;
}

/** A scenario file that could not be read; `cause` is the file system's error. */
export class ScenarioReadError extends Error {
  override name = 'ScenarioReadError';
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    super(`cannot read scenario ${file}: ${fileErrorText(cause)}`);
  }
}

/** A scenario valid as written but not once `--quick` shortened it. */
export class ShortenedScenarioError extends ScenarioError {
  override name = 'ShortenedScenarioError';
}

/** A scenario file's text as a raw scenario: YAML or JSON read, a relative payloadFile made relative to the file. */
export function rawScenario(text: string, file: string, name: string = file): unknown {
  return resolvePayloadFile(readScenarioText(text, name), path.resolve(file));
}

/**
 * Applies the overrides to a raw scenario and validates it: the resolved scenario, or a
 * ScenarioError naming `source` with every issue (a ShortenedScenarioError when only the
 * `quick` version is invalid).
 */
export function resolveScenario(raw: unknown, overrides: ScenarioOverrides = {}, source?: string): Scenario {
  let out = raw;
  for (const assignment of overrides.set ?? []) out = applySet(out, assignment);
  if (overrides.target !== undefined) out = setKnob(out, 'target', overrides.target);
  if (overrides.keepTopics) out = setKnob(out, 'topics.keep', true);
  const checked = checkScenario(out);
  if (!checked.ok) throw new ScenarioError(checked.issues, source);
  if (!overrides.quick) return checked.scenario;
  const short = checkScenario(quickVersion(out as Record<string, unknown>, checked.scenario));
  if (!short.ok) throw new ShortenedScenarioError(short.issues, source);
  return short.scenario;
}

/**
 * Reads a scenario file and resolves it with the overrides (see resolveScenario); `name` is how
 * errors name it. A file that cannot be read is a ScenarioReadError.
 */
export async function loadScenarioFile(
  file: string,
  overrides: ScenarioOverrides = {},
  name: string = file,
): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ScenarioReadError(file, err);
  }
  return resolveScenario(rawScenario(text, file, name), overrides, name);
}
