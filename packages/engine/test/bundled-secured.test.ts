// The bundled target with a secured listener (cluster.security): the run makes a CA, a server
// certificate and a SASL user of its own, starts the bundled broker (or cluster) with them, and both
// drivers reach it over SASL_SSL. The stored run says how the listener was secured and holds none of
// the secrets; without the knob the listener is plain text, as before. A run that completes is the
// proof: clients that insist on TLS and SASL get nowhere with a listener that has neither.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, type RunRecord, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planRun, startRecordedRun } from '../src/index.js';

let workDir: string;
let history: History;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-bundled-secured-'));
  history = await History.open(path.join(workDir, 'history.duckdb'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function record(input: ScenarioInput): Promise<RunRecord> {
  const scenario = parseScenario({
    name: 'bundled secured',
    target: 'bundled',
    records: 3000,
    topics: { partitions: 2 },
    producers: { count: 1, messageSize: 200 },
    consumers: { count: 1 },
    ...input,
  });
  const live = await startRecordedRun(scenario, { history, workDir });
  return live.done;
}

/** Nothing of the run's certificate, key or user is left on disk or in the history. */
async function expectNoSecrets(run: RunRecord): Promise<void> {
  const stored = JSON.stringify(await history.getRun(run.id));
  expect(stored).not.toMatch(/BEGIN (CERTIFICATE|PRIVATE KEY)|kbench:/);
  const file = await readFile(history.path);
  expect(file.includes(Buffer.from('PRIVATE KEY'))).toBe(false);
  expect((await readdir(workDir)).filter((f) => f.startsWith('kbench-tls-'))).toEqual([]);
}

describe('the bundled target with cluster.security', () => {
  for (const driver of ['kafkajs', 'native'] as const) {
    it(`${driver}: TLS and SCRAM-SHA-512 on the run's own CA and user, stored as SASL_SSL`, async () => {
      const run = await record({ driver, cluster: { security: { tls: true, sasl: 'scram-sha-512' } } });
      expect(run.status, String(run.error)).toBe('completed');
      expect(run.summary?.produced.records).toBe(3000);
      expect(run.summary?.consumed.records).toBeGreaterThan(0);
      const stored = await history.getRun(run.id);
      expect(stored?.environment).toMatchObject({
        target: 'bundled',
        driver,
        security: 'SASL_SSL scram-sha-512',
      });
      expect(stored?.scenario.cluster.security).toEqual({ tls: true, sasl: 'scram-sha-512' });
      await expectNoSecrets(run);
    });
  }

  it('native on a 3-node cluster, RF 3: every node listens with TLS and PLAIN', async () => {
    const run = await record({
      driver: 'native',
      cluster: { nodes: 3, security: { tls: true, sasl: 'plain' } },
      topics: { partitions: 3, replicationFactor: 3 },
      producers: { count: 1, messageSize: 200, acks: 'all' },
    });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.summary?.produced.records).toBe(3000);
    expect(run.environment.security).toBe('SASL_SSL plain');
    await expectNoSecrets(run);
  });

  it('TLS alone is SSL', async () => {
    const run = await record({
      driver: 'native',
      consumers: { count: 0 },
      cluster: { security: { tls: true } },
    });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.environment.security).toBe('SSL');
  });

  it('a dry run names the listener it would start', () => {
    const plan = (input: ScenarioInput) => planRun(parseScenario(input)).target.security;
    expect(plan({ cluster: { security: { tls: true, sasl: 'scram-sha-256' } } })).toBe(
      'SASL_SSL scram-sha-256',
    );
    expect(plan({ cluster: { security: { sasl: 'plain' } } })).toBe('SASL_PLAINTEXT plain');
    expect(plan({})).toBe('PLAINTEXT');
  });

  it('without the knob the listener is plain text, as before', async () => {
    const run = await record({ driver: 'native' });
    expect(run.status, String(run.error)).toBe('completed');
    expect(run.environment.security).toBeUndefined();
    expect(run.scenario.cluster.security).toBeUndefined();
  });
});
