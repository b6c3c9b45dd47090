// The scenario library as people name it: the checkout's scenarios/ folder and a person's own
// (saved from the composer, named user/...), their scenario files, their write-up folders, and the
// nearest name to a misspelt one. `kbench run|sweep|reproduce` and the server's scenario and
// reproduction routes all find scenarios here; each words the errors its own way (exit 2, HTTP 4xx).
import { type Dirent, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, realpath, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  checkScenario,
  didYouMean,
  readScenarioText,
  type Scenario,
  type ScenarioEntry,
  ScenarioError,
  type ScenarioFile,
  type ScenarioIssue,
  type ScenarioOutline,
} from '@kbench/schema';
import { PUBLISHED_FILE } from './reproduction.js';

export const SCENARIO_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;
/** Names of the person's own scenarios start with this, to keep them apart from the library's. */
export const USER_PREFIX = 'user/';
/** How deep below a library folder scenarios and write-ups are looked for. */
const MAX_DEPTH = 6;

/** A library path that names no scenario: `bad` as written (it never could), `missing`, or `exists` on a save. */
export class LibraryPathError extends Error {
  override name = 'LibraryPathError';
  constructor(
    readonly kind: 'bad' | 'missing' | 'exists',
    message: string,
  ) {
    super(message);
  }
}

/** A scenario argument named a folder, not a file: the scenarios in it, and whether it is a write-up. */
export class ScenarioFolderError extends Error {
  override name = 'ScenarioFolderError';
  constructor(
    readonly arg: string,
    /** The scenarios in it as `<arg>/<name>`, at most 12. */
    readonly inside: string[],
    readonly writeUp: boolean,
  ) {
    super(`${arg} is a folder`);
  }
}

/** A scenario argument that is neither a file nor a library name; `cause` is the file system's error. */
export class UnknownScenarioError extends Error {
  override name = 'UnknownScenarioError';
  constructor(
    readonly arg: string,
    override readonly cause: unknown,
    /** ` (did you mean "<the nearest library name>"?)`, or empty when none is near. */
    readonly didYouMean: string,
  ) {
    super(`no scenario ${arg}`);
  }
}

/** A folder of scenarios that reproduces a published write-up. */
export interface WriteUpFolder {
  /** As the library names it: `kreps-2014`, or `user/my-write-up` for the user's own. */
  folder: string;
  /** Where it is on disk. */
  dir: string;
}

/** A scenario of the library read from disk; `file` is where (never answered over HTTP). */
export interface LibraryFile extends ScenarioFile {
  file: string;
}

interface Root {
  dir: string;
  prefix: string;
}

const isFile = (file: string): boolean => statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
const isDirectory = (dir: string): boolean =>
  statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;

/** The name's scenario extension (.yaml, .yml or .json, in any case), or undefined. */
const extensionOf = (name: string): string | undefined =>
  SCENARIO_EXTENSIONS.find((e) => name.toLowerCase().endsWith(e));

/** True for a scenario file's name (a write-up's published.yaml is beside its scenarios, not one). */
const isScenarioName = (name: string): boolean => name !== PUBLISHED_FILE && extensionOf(name) !== undefined;

/** A folder's entries, hidden ones left out; none when it does not exist (the user's own may not yet). */
function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => !e.name.startsWith('.'));
  } catch {
    return [];
  }
}

/** The scenario files below a folder, as `/`-separated paths relative to it (`kreps-2014/consumer-1.yaml`). */
function scenarioFiles(dir: string, rel = '', depth = 0): string[] {
  const out: string[] = [];
  for (const entry of entriesOf(dir)) {
    const name = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory() && depth < MAX_DEPTH)
      out.push(...scenarioFiles(path.join(dir, entry.name), name, depth + 1));
    else if (entry.isFile() && isScenarioName(entry.name)) out.push(name);
  }
  return out.sort();
}

/** Folders below `dir` (not `dir` itself) holding a published.yaml, as `/`-separated relative paths. */
function writeUpDirs(dir: string, rel = '', depth = 0): string[] {
  const entries = entriesOf(dir);
  const out: string[] = [];
  if (rel !== '' && entries.some((e) => e.isFile() && e.name === PUBLISHED_FILE)) out.push(rel);
  for (const entry of entries) {
    if (entry.isDirectory() && depth < MAX_DEPTH)
      out.push(
        ...writeUpDirs(path.join(dir, entry.name), rel ? `${rel}/${entry.name}` : entry.name, depth + 1),
      );
  }
  return out;
}

/** A file name without its scenario extension. */
const withoutExtension = (name: string): string =>
  name.slice(0, name.length - (extensionOf(name)?.length ?? 0));

/** True for a path that stays below the folder it is relative to: no absolute path, no ., .. or empty part. */
function isPlainRelative(rel: string): boolean {
  return (
    rel !== '' &&
    !path.isAbsolute(rel) &&
    !rel.includes('\0') &&
    !rel.split(/[\\/]/).some((p) => p === '..' || p === '.' || p === '')
  );
}

type Checked =
  | { scenario: Scenario; issues?: undefined; raw: unknown }
  | { scenario?: undefined; issues: ScenarioIssue[]; raw: unknown };

/** A scenario file's text checked as written (no overrides): the resolved scenario or its issues. */
function check(text: string, name: string): Checked {
  let raw: unknown;
  try {
    raw = readScenarioText(text, name);
  } catch (err) {
    if (err instanceof ScenarioError) return { issues: err.issues, raw: {} };
    throw err;
  }
  const result = checkScenario(raw);
  return result.ok ? { scenario: result.scenario, raw } : { issues: result.issues, raw };
}

function field(raw: unknown, key: string): string | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const value = (raw as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** The knobs a person scans the list for. */
function outline(s: Scenario): ScenarioOutline {
  return {
    target: s.target,
    driver: s.driver,
    nodes: s.cluster.nodes,
    partitions: s.topics.partitions,
    producers: s.producers.count,
    consumers: s.consumers.count,
    messageSize: s.producers.messageSize,
    length: s.records !== undefined ? `${s.records} records` : (s.duration ?? ''),
    sweep: s.sweep !== undefined,
  };
}

export class ScenarioLibrary {
  private readonly roots: Root[];

  /** `dir`: the checkout's scenarios/; `userDir`: the person's own, named user/... */
  constructor(
    readonly dir: string,
    readonly userDir?: string,
  ) {
    this.roots = [{ dir, prefix: '' }];
    if (userDir) this.roots.push({ dir: userDir, prefix: USER_PREFIX });
  }

  /** Every scenario's name, without extension (`quickstart`, `kreps-2014/consumer-1`, `user/mine`). */
  names(): string[] {
    return this.roots.flatMap(({ dir, prefix }) =>
      scenarioFiles(dir).map((f) => prefix + withoutExtension(f)),
    );
  }

  /**
   * The file a scenario argument names, as `kbench run` takes it: a path that exists wins;
   * otherwise a library name, with or without its extension. A ScenarioFolderError for a folder,
   * an UnknownScenarioError (with the nearest name) for anything else.
   */
  resolve(arg: string): string {
    let error: unknown;
    try {
      const stats = statSync(arg);
      if (stats.isFile()) return arg;
      if (stats.isDirectory()) throw this.folderError(arg, arg);
    } catch (err) {
      if (err instanceof ScenarioFolderError) throw err;
      error = err;
    }
    for (const { dir, prefix } of this.roots) {
      if (!arg.startsWith(prefix)) continue;
      const name = arg.slice(prefix.length);
      if (path.isAbsolute(name) || name.split(/[\\/]/).includes('..')) continue;
      for (const ext of ['', ...SCENARIO_EXTENSIONS]) {
        const candidate = path.join(dir, `${name}${ext}`);
        if (isFile(candidate)) return candidate;
      }
      if (isDirectory(path.join(dir, name))) throw this.folderError(path.join(dir, name), arg);
    }
    throw new UnknownScenarioError(arg, error, didYouMean(arg.replace(/\.(ya?ml|json)$/, ''), this.names()));
  }

  private folderError(dir: string, arg: string): ScenarioFolderError {
    const inside = scenarioFiles(dir)
      .slice(0, 12)
      .map((f) => `${arg.replace(/\/+$/, '')}/${withoutExtension(f)}`);
    return new ScenarioFolderError(arg, inside, isFile(path.join(dir, PUBLISHED_FILE)));
  }

  /** The folders with a published.yaml, the library's first, then the user's. */
  writeUps(): WriteUpFolder[] {
    return this.roots.flatMap(({ dir, prefix }) =>
      writeUpDirs(dir)
        .sort()
        .map((rel) => ({ folder: prefix + rel, dir: path.join(dir, ...rel.split('/')) })),
    );
  }

  /** One write-up folder by its library name, or undefined (only folders writeUps lists are found). */
  writeUp(folder: string): WriteUpFolder | undefined {
    return this.writeUps().find((w) => w.folder === folder);
  }

  /**
   * The write-up folder an argument names, as `kbench reproduce` takes it: a folder path with a
   * published.yaml, or a write-up's library name; undefined for neither.
   */
  findWriteUp(arg: string): string | undefined {
    const candidates = [path.resolve(arg)];
    for (const { dir, prefix } of this.roots) {
      if (arg.startsWith(prefix) && !arg.split(/[\\/]/).includes('..'))
        candidates.push(path.join(dir, arg.slice(prefix.length)));
    }
    return candidates.find((c) => isFile(path.join(c, PUBLISHED_FILE)));
  }

  /** A folder as the library names it (`kreps-2014`, `user/mine`); its base name outside the library. */
  nameOf(folder: string): string {
    for (const { dir, prefix } of this.roots) {
      const rel = path.relative(dir, folder);
      if (rel && !rel.startsWith('..') && !path.isAbsolute(rel))
        return prefix + rel.split(path.sep).join('/');
    }
    return path.basename(folder);
  }

  /** Every scenario file with its name, description and outline, or what is wrong with it. */
  async list(): Promise<ScenarioEntry[]> {
    const out: ScenarioEntry[] = [];
    for (const { dir, prefix } of this.roots) {
      for (const file of scenarioFiles(dir)) {
        const rel = prefix + file;
        const checked = check(await readFile(path.join(dir, ...file.split('/')), 'utf8'), rel);
        const slash = rel.lastIndexOf('/');
        const entry: ScenarioEntry = {
          path: rel,
          folder: slash < 0 ? '' : rel.slice(0, slash),
          name: field(checked.raw, 'name') ?? withoutExtension(rel.slice(slash + 1)),
          description: field(checked.raw, 'description') ?? '',
          valid: checked.issues === undefined,
        };
        if (checked.issues) entry.issues = checked.issues;
        else entry.outline = outline(checked.scenario);
        out.push(entry);
      }
    }
    return out.sort((a, b) => a.folder.localeCompare(b.folder) || a.path.localeCompare(b.path));
  }

  /** Reads one scenario by its library path (extension included), checked as written. */
  async read(libraryPath: string): Promise<LibraryFile> {
    const file = await this.locate(libraryPath);
    const text = await readFile(file, 'utf8');
    const checked = check(text, libraryPath);
    return checked.scenario
      ? { path: libraryPath, file, text, scenario: checked.scenario }
      : { path: libraryPath, file, text, issues: checked.issues };
  }

  /**
   * Saves a valid scenario as `<user folder>/<file>.yaml`, named user/<file>.yaml. A ScenarioError
   * for an invalid scenario; a LibraryPathError for a bad name (`bad`) or, unless told, an existing
   * file (`exists`).
   */
  async save(fileName: string, text: string, overwrite: boolean): Promise<{ path: string }> {
    if (!this.userDir) throw new LibraryPathError('bad', 'this server has no folder for your own scenarios');
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(fileName) || fileName.includes('..')) {
      throw new LibraryPathError(
        'bad',
        'file: use 1 to 100 of the characters A-Z a-z 0-9 . _ - (no folders)',
      );
    }
    const checked = check(text, fileName);
    if (checked.issues) throw new ScenarioError(checked.issues);
    const base = fileName.replace(/\.(ya?ml|json)$/i, '');
    const target = path.join(this.userDir, `${base}.yaml`);
    await mkdir(this.userDir, { recursive: true });
    if (!overwrite && (await stat(target).catch(() => null))) {
      throw new LibraryPathError('exists', `user/${base}.yaml exists; save with overwrite to replace it`);
    }
    const temp = `${target}.${process.pid}.tmp`;
    await writeFile(temp, text.endsWith('\n') ? text : `${text}\n`);
    await rename(temp, target);
    return { path: `${USER_PREFIX}${base}.yaml` };
  }

  /** The file of a library path, which must stay inside its folder (symbolic links too). */
  private async locate(libraryPath: string): Promise<string> {
    const root = this.roots.find((r) => r.prefix !== '' && libraryPath.startsWith(r.prefix)) ?? this.roots[0];
    const { dir, prefix } = root as Root;
    const rel = libraryPath.slice(prefix.length);
    if (!isPlainRelative(rel)) {
      throw new LibraryPathError(
        'bad',
        'a scenario path is relative to the scenarios folder, without . or .. parts',
      );
    }
    if (!extensionOf(rel)) {
      throw new LibraryPathError('bad', 'a scenario file ends in .yaml, .yml or .json');
    }
    const notFound = new LibraryPathError('missing', `no scenario ${libraryPath}`);
    let real: string;
    let realRoot: string;
    try {
      realRoot = await realpath(dir);
      real = await realpath(path.resolve(dir, rel));
    } catch {
      throw notFound;
    }
    if (!real.startsWith(realRoot + path.sep))
      throw new LibraryPathError('bad', 'a scenario path must stay inside the scenarios folder');
    if (!(await stat(real)).isFile()) throw notFound;
    return real;
  }
}
