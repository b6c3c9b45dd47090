// Real parts for the tests: a History on a temp DuckDB file and a scenarios folder on disk.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, type RunRecord, type RunSummary, type Sample } from '@kbench/schema';

export interface Workspace {
  dir: string;
  scenariosDir: string;
  history: History;
  remove(): Promise<void>;
}

export const SCENARIO_FILES: Record<string, string> = {
  'quickstart.yaml':
    'name: quick start\ndescription: one producer, one consumer\nduration: 3s\nwarmup: 1s\nconsumers: { count: 1 }\n',
  'kreps-2014/producer-1-thread.yaml':
    'name: kreps single producer\nproducers: { count: 1, acks: 1, messageSize: 100 }\n',
  'kreps-2014/bad-acks.yaml': 'name: bad acks\nproducers: { acks: 2 }\n',
  'nested/deep/as-json.json': '{ "name": "from json", "duration": "10s" }\n',
  'sweeps/sizes.yaml': 'name: sizes\nsweep: { knob: producers.messageSize, values: [10, 100] }\n',
  'kreps-2014/README.md': '# not a scenario\n',
};

export async function makeWorkspace(): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), 'kbench-server-test-'));
  const scenariosDir = join(dir, 'scenarios');
  for (const [path, text] of Object.entries(SCENARIO_FILES)) {
    const file = join(scenariosDir, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  const history = await History.open(join(dir, 'history.duckdb'));
  return { dir, scenariosDir, history, remove: () => rm(dir, { recursive: true, force: true }) };
}

export function sample(t: number, producedRecords: number): Sample {
  return {
    t,
    intervalMs: 1000,
    warmup: t <= 1,
    producedRecords,
    producedBytes: producedRecords * 100,
    consumedRecords: producedRecords,
    consumedBytes: producedRecords * 100,
    errors: 0,
    backlog: 0,
    publishP50Ms: 1.5,
    publishP99Ms: 4.25,
    publishMaxMs: 9,
    e2eP50Ms: 2,
    e2eP99Ms: 6,
    e2eMaxMs: 11,
  };
}

/** Stores a run (finished unless told not to) through the History's own writes, as the engine would. */
export async function storeFinishedRun(
  history: History,
  id: string,
  name: string,
  opts: { finish?: boolean; summary?: RunSummary; target?: string } = {},
): Promise<RunRecord> {
  const record: RunRecord = {
    id,
    status: 'running',
    scenario: parseScenario({ name, duration: '3s', ...(opts.target ? { target: opts.target } : {}) }),
    source: null,
    environment: {
      cores: 2,
      cpuModel: 'test cpu',
      memoryBytes: 1024 ** 3,
      os: 'linux',
      hostname: 'test',
      versions: { node: process.versions.node },
      target: 'bundled',
      bootstrap: '127.0.0.1:9092',
      driver: 'kafkajs',
    },
    summary: null,
    error: null,
    startedAt: new Date().toISOString(),
    finishedAt: null,
    tags: [],
    notes: '',
  };
  await history.createRun(record);
  await history.appendSamples(id, [sample(1, 500), sample(2, 1000), sample(3, 1200)]);
  if (opts.finish === false) return record;
  const summary: RunSummary = opts.summary ?? {
    measuredSeconds: 2,
    produced: { records: 2200, recordsPerSec: 1100, mbPerSec: 0.105, wireMbPerSec: null, errors: 0 },
    consumed: { records: 2200, recordsPerSec: 1100, mbPerSec: 0.105 },
    publishLatencyMs: null,
    endToEndLatencyMs: null,
  };
  const finishedAt = new Date().toISOString();
  await history.finishRun(id, { status: 'completed', summary, error: null, finishedAt });
  return { ...record, status: 'completed', summary, finishedAt };
}
