// Kafka client properties reach both drivers: each reports what its clients run with, the history
// stores it beside the resolved scenario, and enable.auto.commit has the effect Kafka gives it.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startBroker } from '@kbench/broker-native';
import { History } from '@kbench/history';
import { parseScenario, type ScenarioInput } from '@kbench/schema';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioRun, startRecordedRun } from '../src/index.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-client-props-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

const runId = () => Math.random().toString(16).slice(2, 10);

describe('client properties on the bundled broker', () => {
  it('native: the Rust engine runs with the properties given and reports them, stored in the history', async () => {
    const history = await History.open(path.join(workDir, 'history.duckdb'));
    const live = await startRecordedRun(
      parseScenario({
        driver: 'native',
        records: 3000,
        producers: {
          config: {
            'max.in.flight.requests.per.connection': 1,
            'buffer.memory': '1MB',
            'max.request.size': '256KB',
            'request.timeout.ms': 10_000,
          },
        },
        consumers: {
          count: 1,
          config: {
            'fetch.max.wait.ms': 100,
            'max.partition.fetch.bytes': '64KB',
            'fetch.max.bytes': '1MB',
            'request.timeout.ms': 20_000,
          },
        },
      }),
      { history, workDir },
    );
    const record = await live.done;
    expect(record.status, record.error ?? '').toBe('completed');
    expect(record.summary?.produced.records).toBeGreaterThan(0);
    const stored = await history.getRun(live.id);
    // The resolved scenario: the knob the property set, and the pass-through properties.
    expect(stored?.scenario.producers.maxInFlight).toBe(1);
    expect(stored?.scenario.producers.config).toEqual({
      'buffer.memory': 1024 ** 2,
      'max.request.size': 256 * 1024,
      'request.timeout.ms': 10_000,
    });
    expect(stored?.environment.clientProperties?.producers).toMatchObject({
      'max.in.flight.requests.per.connection': '1',
      'buffer.memory': String(1024 ** 2),
      'max.request.size': String(256 * 1024),
      'request.timeout.ms': '10000',
      acks: '1',
    });
    expect(stored?.environment.clientProperties?.consumers).toMatchObject({
      'request.timeout.ms': '20000',
      'fetch.max.wait.ms': '100',
      'max.partition.fetch.bytes': String(64 * 1024),
      'fetch.max.bytes': String(1024 ** 2),
      'fetch.min.bytes': '1',
    });
  });

  it('kafkajs: its workers run with the properties given and report them', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        driver: 'kafkajs',
        records: 3000,
        producers: {
          config: {
            'max.in.flight.requests.per.connection': 1,
            'request.timeout.ms': 10_000,
            'client.id': 'props-p',
          },
        },
        consumers: {
          count: 1,
          config: { 'fetch.max.wait.ms': 100, 'fetch.min.bytes': 1, 'session.timeout.ms': 12_000 },
        },
      }),
      { runId: runId(), workDir },
    ).execute();
    expect(outcome.status, outcome.error ?? '').toBe('completed');
    expect(outcome.environment.clientProperties?.producers).toMatchObject({
      'max.in.flight.requests.per.connection': '1',
      'request.timeout.ms': '10000',
      'client.id': 'props-p',
    });
    expect(outcome.environment.clientProperties?.consumers).toMatchObject({
      'fetch.max.wait.ms': '100',
      'fetch.min.bytes': '1',
      'session.timeout.ms': '12000',
    });
  });
});

describe('enable.auto.commit', () => {
  /** Committed offsets of the run's group after a run that keeps its topics and groups. */
  async function committedAfter(input: ScenarioInput): Promise<number[]> {
    const dataDir = await mkdtemp(path.join(workDir, 'broker-'));
    const broker = await startBroker({ dataDir, port: 0 });
    const id = runId();
    const admin = new Kafka({ brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING }).admin();
    try {
      const outcome = await new ScenarioRun(
        parseScenario({
          ...input,
          target: `127.0.0.1:${broker.port}`,
          records: 2000,
          topics: { keep: true },
        }),
        { runId: id, workDir },
      ).execute();
      expect(outcome.status, outcome.error ?? '').toBe('completed');
      expect(outcome.summary?.consumed.records).toBeGreaterThan(0);
      await admin.connect();
      const [topic] = await admin.fetchOffsets({ groupId: `kbench-${id}-g0`, topics: [`kbench-${id}-0`] });
      return (topic?.partitions ?? []).map((p) => Number(p.offset));
    } finally {
      await admin.disconnect();
      await broker.stop();
    }
  }

  for (const driver of ['native', 'kafkajs'] as const) {
    it(`${driver}: false leaves the group without committed offsets, true commits where it read to`, async () => {
      const consumers = (autoCommit: boolean) => ({ count: 1, config: { 'enable.auto.commit': autoCommit } });
      expect(await committedAfter({ driver, consumers: consumers(false) })).toEqual([-1]);
      const [committed] = await committedAfter({ driver, consumers: consumers(true) });
      expect(committed).toBeGreaterThan(0);
    });
  }
});
