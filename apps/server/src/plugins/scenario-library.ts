// The scenario files on disk: listed recursively, read only from inside their folder.
import { mkdir, readdir, readFile, realpath, rename, stat, writeFile } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { PUBLISHED_FILE } from '@kbench/app';
import {
  checkScenario,
  readScenarioText,
  type Scenario,
  type ScenarioEntry,
  ScenarioError,
  type ScenarioIssue,
  type ScenarioOutline,
} from '@kbench/schema';
import fp from 'fastify-plugin';
import { HttpError, invalidScenario } from '../http-error.js';

const SCENARIO_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
/** Paths of scenarios from the user's own folder start with this, to keep them apart from the library's. */
export const USER_PREFIX = 'user/';

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

export interface ScenarioFile {
  path: string;
  /** Where it is on disk. */
  file: string;
  text: string;
  scenario?: Scenario;
  issues?: ScenarioIssue[];
}

type Checked =
  | { scenario: Scenario; issues?: undefined }
  | { scenario?: undefined; issues: ScenarioIssue[]; raw: unknown };

function check(text: string, path: string): Checked {
  let raw: unknown;
  try {
    raw = readScenarioText(text, path);
  } catch (err) {
    if (err instanceof ScenarioError) return { issues: err.issues, raw: {} };
    throw err;
  }
  const result = checkScenario(raw);
  return result.ok ? { scenario: result.scenario } : { issues: result.issues, raw };
}

function field(raw: unknown, key: string): string | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const value = (raw as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** A folder's entries; none when it does not exist (the user's own folder may not yet). */
async function entriesOf(dir: string): Promise<import('node:fs').Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function walk(dir: string): Promise<string[]> {
  const entries = await entriesOf(dir);
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await walk(full)));
    else if (
      entry.isFile() &&
      entry.name !== PUBLISHED_FILE &&
      SCENARIO_EXTENSIONS.has(extname(entry.name).toLowerCase())
    )
      files.push(full);
  }
  return files;
}

/** Folders below `dir` (not `dir` itself) holding a published.yaml, as paths relative to `dir`. */
async function writeUpDirs(dir: string, rel = ''): Promise<string[]> {
  const entries = await entriesOf(dir);
  const out: string[] = [];
  if (rel !== '' && entries.some((e) => e.isFile() && e.name === PUBLISHED_FILE)) out.push(rel);
  for (const entry of entries) {
    if (entry.isDirectory() && !entry.name.startsWith('.'))
      out.push(...(await writeUpDirs(join(dir, entry.name), rel ? `${rel}/${entry.name}` : entry.name)));
  }
  return out;
}

/** A folder of scenarios that reproduces a published write-up. */
export interface WriteUpFolder {
  /** As the library names it: `kreps-2014`, or `user/my-write-up` for the user's own. */
  folder: string;
  /** Where it is on disk. */
  dir: string;
}

export class ScenarioLibrary {
  constructor(
    private readonly root: string,
    private readonly userRoot?: string,
  ) {}

  async list(): Promise<ScenarioEntry[]> {
    const roots: [string, string][] = [[this.root, '']];
    if (this.userRoot) roots.push([this.userRoot, USER_PREFIX]);
    const out: ScenarioEntry[] = [];
    for (const [root, prefix] of roots) {
      for (const file of await walk(root)) {
        const rel = prefix + relative(root, file).split(sep).join('/');
        const text = await readFile(file, 'utf8');
        const checked = check(text, rel);
        const slash = rel.lastIndexOf('/');
        const fileName = rel.slice(slash + 1).replace(/\.(ya?ml|json)$/i, '');
        const raw = checked.scenario ?? ('raw' in checked ? checked.raw : undefined);
        const entry: ScenarioEntry = {
          path: rel,
          folder: slash < 0 ? '' : rel.slice(0, slash),
          name: field(raw, 'name') ?? fileName,
          description: field(raw, 'description') ?? '',
          valid: checked.issues === undefined,
        };
        if (checked.issues) entry.issues = checked.issues;
        else if (checked.scenario) entry.outline = outline(checked.scenario);
        out.push(entry);
      }
    }
    return out.sort((a, b) => a.folder.localeCompare(b.folder) || a.path.localeCompare(b.path));
  }

  /** The folders with a published.yaml, the library's first, then the user's. */
  async writeUps(): Promise<WriteUpFolder[]> {
    const roots: [string, string][] = [[this.root, '']];
    if (this.userRoot) roots.push([this.userRoot, USER_PREFIX]);
    const out: WriteUpFolder[] = [];
    for (const [root, prefix] of roots) {
      const found = (await writeUpDirs(root)).sort();
      for (const rel of found) out.push({ folder: prefix + rel, dir: join(root, ...rel.split('/')) });
    }
    return out;
  }

  /** One write-up folder by its library name, or undefined (only folders writeUps lists are found). */
  async writeUp(folder: string): Promise<WriteUpFolder | undefined> {
    return (await this.writeUps()).find((w) => w.folder === folder);
  }

  /**
   * Saves a valid scenario as `<user folder>/<file>.yaml`, listed as user/<file>.yaml. Refuses an
   * invalid scenario (400 with its issues), a bad name (400) and, unless told, an existing file (409).
   */
  async save(fileName: string, text: string, overwrite: boolean): Promise<{ path: string }> {
    if (!this.userRoot) throw new HttpError(400, 'this server has no folder for your own scenarios');
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(fileName) || fileName.includes('..')) {
      throw new HttpError(400, 'file: use 1 to 100 of the characters A-Z a-z 0-9 . _ - (no folders)');
    }
    const checked = check(text, fileName);
    if (checked.issues) throw invalidScenario(checked.issues);
    const base = fileName.replace(/\.(ya?ml|json)$/i, '');
    const target = join(this.userRoot, `${base}.yaml`);
    await mkdir(this.userRoot, { recursive: true });
    if (!overwrite && (await stat(target).catch(() => null))) {
      throw new HttpError(409, `user/${base}.yaml exists; save with overwrite to replace it`);
    }
    const temp = `${target}.${process.pid}.tmp`;
    await writeFile(temp, text.endsWith('\n') ? text : `${text}\n`);
    await rename(temp, target);
    return { path: `${USER_PREFIX}${base}.yaml` };
  }

  /** Reads one scenario by its library path; 400 for a path that leaves the folder, 404 for none. */
  async read(path: string): Promise<ScenarioFile> {
    const file = await this.locate(path);
    const text = await readFile(file, 'utf8');
    const checked = check(text, path);
    return checked.scenario
      ? { path, file, text, scenario: checked.scenario }
      : { path, file, text, issues: checked.issues };
  }

  private async locate(path: string): Promise<string> {
    let root = this.root;
    let rel = path;
    if (this.userRoot && path.startsWith(USER_PREFIX)) {
      root = this.userRoot;
      rel = path.slice(USER_PREFIX.length);
    }
    const parts = rel.split(/[\\/]/);
    if (
      rel === '' ||
      isAbsolute(rel) ||
      rel.includes('\0') ||
      parts.some((p) => p === '..' || p === '.' || p === '')
    ) {
      throw new HttpError(400, 'a scenario path is relative to the scenarios folder, without . or .. parts');
    }
    if (!SCENARIO_EXTENSIONS.has(extname(rel).toLowerCase())) {
      throw new HttpError(400, 'a scenario file ends in .yaml, .yml or .json');
    }
    const notFound = new HttpError(404, `no scenario ${path}`);
    let real: string;
    let realRoot: string;
    try {
      realRoot = await realpath(root);
      real = await realpath(resolve(root, rel));
    } catch {
      throw notFound;
    }
    // A symlink may not lead out of the folder either.
    if (!real.startsWith(realRoot + sep))
      throw new HttpError(400, 'a scenario path must stay inside the scenarios folder');
    if (!(await stat(real)).isFile()) throw notFound;
    return real;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    scenarios: ScenarioLibrary;
  }
}

export const scenarioLibraryPlugin = fp<{ scenariosDir: string; userScenariosDir?: string }>(
  async (app, opts) => {
    app.decorate('scenarios', new ScenarioLibrary(opts.scenariosDir, opts.userScenariosDir));
  },
  { name: 'scenario-library' },
);
