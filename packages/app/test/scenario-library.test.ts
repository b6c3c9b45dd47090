import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ScenarioError } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LibraryPathError,
  ScenarioFolderError,
  ScenarioLibrary,
  UnknownScenarioError,
} from '../src/index.js';

let top: string;
let dir: string;
let userDir: string;
let library: ScenarioLibrary;

/** Writes a file, making its folders. */
async function put(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

beforeAll(async () => {
  top = await mkdtemp(path.join(os.tmpdir(), 'kbench-library-'));
  dir = path.join(top, 'scenarios');
  userDir = path.join(top, 'home', 'scenarios');
  await put(path.join(dir, 'quickstart.yaml'), 'name: quick start\nduration: 5s\n');
  await put(path.join(dir, 'kreps-2014', 'consumer-1.yaml'), 'name: one consumer\ndescription: reads\n');
  await put(path.join(dir, 'kreps-2014', 'producer-1-thread.yml'), 'name: one producer\n');
  await put(path.join(dir, 'kreps-2014', 'published.yaml'), 'title: Kreps 2014\nexperiments: []\n');
  await put(path.join(dir, 'broken.json'), '{"producers": {"acks": 3}}');
  await put(path.join(dir, '.hidden', 'secret.yaml'), 'name: hidden\n');
  await put(path.join(top, 'outside.yaml'), 'name: outside\n');
  await symlink(path.join(top, 'outside.yaml'), path.join(dir, 'escape.yaml'));
  await put(path.join(userDir, 'mine.yaml'), 'name: my own\n');
  await put(path.join(userDir, 'my-write-up', 'published.yaml'), 'title: Mine\nexperiments: []\n');
  library = new ScenarioLibrary(dir, userDir);
});

afterAll(async () => {
  await rm(top, { recursive: true, force: true });
});

describe('names', () => {
  it('lists every scenario file without its extension, not published.yaml, hidden folders or links', () => {
    expect(library.names()).toEqual([
      'broken',
      'kreps-2014/consumer-1',
      'kreps-2014/producer-1-thread',
      'quickstart',
      'user/mine',
    ]);
  });
});

describe('resolve (kbench run)', () => {
  it('takes a path that exists as it is', () => {
    const file = path.join(top, 'outside.yaml');
    expect(library.resolve(file)).toBe(file);
  });

  it('finds a library name with or without its extension, and user/ names in the person’s folder', () => {
    expect(library.resolve('quickstart')).toBe(path.join(dir, 'quickstart.yaml'));
    expect(library.resolve('kreps-2014/producer-1-thread')).toBe(
      path.join(dir, 'kreps-2014', 'producer-1-thread.yml'),
    );
    expect(library.resolve('kreps-2014/consumer-1.yaml')).toBe(
      path.join(dir, 'kreps-2014', 'consumer-1.yaml'),
    );
    expect(library.resolve('user/mine')).toBe(path.join(userDir, 'mine.yaml'));
  });

  it('names a folder’s scenarios, and says when it is a write-up', () => {
    const error = (() => {
      try {
        return library.resolve('kreps-2014');
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(ScenarioFolderError);
    expect((error as ScenarioFolderError).inside).toEqual([
      'kreps-2014/consumer-1',
      'kreps-2014/producer-1-thread',
    ]);
    expect((error as ScenarioFolderError).writeUp).toBe(true);
  });

  it('suggests the nearest library name for a misspelt one, and none for a name nothing resembles', () => {
    const misspelt = (() => {
      try {
        return library.resolve('quickstrat');
      } catch (err) {
        return err;
      }
    })() as UnknownScenarioError;
    expect(misspelt).toBeInstanceOf(UnknownScenarioError);
    expect(misspelt.didYouMean).toBe(' (did you mean "quickstart"?)');
    expect((misspelt.cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(() => library.resolve('zzzzzzzzzzzz')).toThrow(UnknownScenarioError);
    try {
      library.resolve('zzzzzzzzzzzz');
    } catch (err) {
      expect((err as UnknownScenarioError).didYouMean).toBe('');
    }
  });

  it('does not look outside a library for a name with .. in it', () => {
    expect(() => library.resolve('kreps-2014/../../outside')).toThrow(UnknownScenarioError);
  });
});

describe('write-ups (kbench reproduce and the reproduction routes)', () => {
  it('lists the library’s write-ups, then the person’s', () => {
    expect(library.writeUps()).toEqual([
      { folder: 'kreps-2014', dir: path.join(dir, 'kreps-2014') },
      { folder: 'user/my-write-up', dir: path.join(userDir, 'my-write-up') },
    ]);
    expect(library.writeUp('user/my-write-up')?.dir).toBe(path.join(userDir, 'my-write-up'));
    expect(library.writeUp('nowhere')).toBeUndefined();
  });

  it('finds a write-up by library name or path, and names a folder as the library does', () => {
    expect(library.findWriteUp('kreps-2014')).toBe(path.join(dir, 'kreps-2014'));
    expect(library.findWriteUp('user/my-write-up')).toBe(path.join(userDir, 'my-write-up'));
    expect(library.findWriteUp(path.join(dir, 'kreps-2014'))).toBe(path.join(dir, 'kreps-2014'));
    expect(library.findWriteUp('quickstart')).toBeUndefined();
    expect(library.nameOf(path.join(userDir, 'my-write-up'))).toBe('user/my-write-up');
    expect(library.nameOf(path.join(top, 'elsewhere', 'tiny'))).toBe('tiny');
  });
});

describe('list, read and save (the server’s scenario routes)', () => {
  it('lists each scenario with its name, description and outline, or its issues', async () => {
    const entries = await library.list();
    const consumer = entries.find((e) => e.path === 'kreps-2014/consumer-1.yaml');
    expect(consumer).toMatchObject({
      folder: 'kreps-2014',
      name: 'one consumer',
      description: 'reads',
      valid: true,
    });
    expect(consumer?.outline?.partitions).toBeGreaterThan(0);
    const broken = entries.find((e) => e.path === 'broken.json');
    expect(broken).toMatchObject({ name: 'broken', valid: false });
    expect(broken?.issues?.map((i) => i.path)).toEqual(['producers.acks']);
    expect(entries.map((e) => e.path)).toContain('user/mine.yaml');
  });

  it('reads a library path, and refuses one that leaves the folder or names no scenario file', async () => {
    const file = await library.read('user/mine.yaml');
    expect(file).toMatchObject({ path: 'user/mine.yaml', scenario: { name: 'my own' } });
    const kind = (p: string) =>
      library.read(p).then(
        () => 'read',
        (err: unknown) => (err instanceof LibraryPathError ? `${err.kind}: ${err.message}` : String(err)),
      );
    expect(await kind('../outside.yaml')).toBe(
      'bad: a scenario path is relative to the scenarios folder, without . or .. parts',
    );
    expect(await kind('kreps-2014/published')).toBe('bad: a scenario file ends in .yaml, .yml or .json');
    expect(await kind('escape.yaml')).toBe('bad: a scenario path must stay inside the scenarios folder');
    expect(await kind('kreps-2014/missing.yaml')).toBe('missing: no scenario kreps-2014/missing.yaml');
  });

  it('saves a valid scenario under user/, refusing an invalid one, a bad name and an overwrite by accident', async () => {
    expect(await library.save('acks-all', 'name: acks all\nproducers: { acks: all }', false)).toEqual({
      path: 'user/acks-all.yaml',
    });
    expect(await readFile(path.join(userDir, 'acks-all.yaml'), 'utf8')).toBe(
      'name: acks all\nproducers: { acks: all }\n',
    );
    await expect(library.save('acks-all', 'name: again\n', false)).rejects.toMatchObject({ kind: 'exists' });
    await expect(library.save('bad', 'producers: { acks: 3 }\n', false)).rejects.toBeInstanceOf(
      ScenarioError,
    );
    await expect(library.save('../escape', 'name: x\n', false)).rejects.toMatchObject({ kind: 'bad' });
  });
});
