import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ScenarioError } from '@kbench/schema';
import { describe, expect, it } from 'vitest';
import { loadScenarioFile, ScenarioReadError, ShortenedScenarioError } from '../src/index.js';

async function scenarioFile(text: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'kbench-app-')), 'scenario.yaml');
  await writeFile(file, text);
  return file;
}

describe('loadScenarioFile', () => {
  it('applies --set, --target and --keep-topics before it validates', async () => {
    const file = await scenarioFile('name: t\nduration: 60s\n');
    const scenario = await loadScenarioFile(file, {
      set: ['producers.acks=all', 'duration=5s'],
      target: 'kafka',
      keepTopics: true,
    });
    expect(scenario.producers.acks).toBe('all');
    expect(scenario.duration).toBe('5s');
    expect(scenario.target).toBe('kafka');
    expect(scenario.topics.keep).toBe(true);
  });

  it('shortens the scenario with quick', async () => {
    const file = await scenarioFile('name: t\nduration: 10m\nwarmup: 1m\n');
    const full = await loadScenarioFile(file);
    const quick = await loadScenarioFile(file, { quick: true });
    expect(quick.duration).not.toBe(full.duration);
  });

  it('names the file in a ScenarioError for an invalid scenario', async () => {
    const file = await scenarioFile('name: t\nproducers: { acks: 7 }\n');
    const error = await loadScenarioFile(file).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ScenarioError);
    expect(error).not.toBeInstanceOf(ShortenedScenarioError);
    expect((error as Error).message).toContain(file);
  });

  it('throws a ScenarioReadError, with the cause, for a file that cannot be read', async () => {
    const error = await loadScenarioFile('/nonexistent/scenario.yaml').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ScenarioReadError);
    expect((error as ScenarioReadError).message).toMatch(
      /^cannot read scenario \/nonexistent\/scenario.yaml: /,
    );
    expect(((error as ScenarioReadError).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
  });
});
