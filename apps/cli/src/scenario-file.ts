// Which file a scenario argument names: a path as given, else a scenario of the library
// (`quickstart`, `kreps-2014/producer-1-thread`) or one saved from the composer (`user/my-test`).
import { type Dirent, readdirSync, type Stats, statSync } from 'node:fs';
import path from 'node:path';
import { kbenchHome } from '@kbench/history';
import { didYouMean, fileErrorText } from '@kbench/schema';
import { defaultScenariosDir } from './paths.js';
import { UsageError } from './usage.js';

const EXTENSIONS = ['.yaml', '.yml', '.json'];
/** A write-up's published figures: beside its scenarios, but not a scenario. */
const NOT_SCENARIOS = new Set(['published.yaml']);
const USER_PREFIX = 'user/';

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** A folder was named where one scenario file was wanted: list the scenarios it holds. */
function folderError(dir: string, arg: string): UsageError {
  const inside = scenarioNames(dir)
    .slice(0, 12)
    .map((n) => `${arg.replace(/\/+$/, '')}/${n}`);
  const writeUp = isFile(path.join(dir, 'published.yaml'))
    ? `, or reproduce the whole write-up with kbench reproduce ${arg}`
    : '';
  return new UsageError(
    `${arg} is a folder; name one scenario in it${inside.length > 0 ? ` (${inside.join(', ')})` : ''}${writeUp}`,
  );
}

/** The scenario files under a folder, as names without extension (`kreps-2014/consumer-1`). */
function scenarioNames(dir: string, prefix = '', depth = 0): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory() && depth < 3) {
      names.push(...scenarioNames(path.join(dir, entry.name), `${prefix}${entry.name}/`, depth + 1));
    } else if (entry.isFile() && !NOT_SCENARIOS.has(entry.name)) {
      const ext = EXTENSIONS.find((e) => entry.name.endsWith(e));
      if (ext) names.push(`${prefix}${entry.name.slice(0, -ext.length)}`);
    }
  }
  return names.sort();
}

/** The scenario libraries: the checkout's scenarios/ and the composer's saved ones (named user/...). */
export function scenarioLibraries(): { dir: string; prefix: string }[] {
  return [
    { dir: defaultScenariosDir(), prefix: '' },
    { dir: path.join(kbenchHome(), 'scenarios'), prefix: USER_PREFIX },
  ];
}

/**
 * The file a scenario argument names. A path that exists wins; otherwise a library name, with or
 * without its extension. A UsageError in words otherwise, with the nearest library name.
 */
export function resolveScenarioFile(arg: string): string {
  let stats: Stats | undefined;
  let error: unknown;
  try {
    stats = statSync(arg);
  } catch (err) {
    error = err;
  }
  if (stats?.isFile()) return arg;
  if (stats?.isDirectory()) throw folderError(arg, arg);
  for (const { dir, prefix } of scenarioLibraries()) {
    if (prefix !== '' && !arg.startsWith(prefix)) continue;
    const name = arg.slice(prefix.length);
    if (path.isAbsolute(name) || name.split(/[\\/]/).includes('..')) continue;
    for (const ext of ['', ...EXTENSIONS]) {
      const candidate = path.join(dir, `${name}${ext}`);
      if (isFile(candidate)) return candidate;
    }
    if (isDirectory(path.join(dir, name))) throw folderError(path.join(dir, name), arg);
  }
  const known = scenarioLibraries().flatMap(({ dir, prefix }) =>
    scenarioNames(dir).map((n) => `${prefix}${n}`),
  );
  throw new UsageError(
    `cannot read scenario ${arg}: ${fileErrorText(error)}, and no scenario of the library is called that${didYouMean(
      arg.replace(/\.(ya?ml|json)$/, ''),
      known,
    )} (kbench run takes a file path or a library name such as quickstart or kreps-2014/producer-1-thread; the web's Scenarios page lists them)`,
  );
}
