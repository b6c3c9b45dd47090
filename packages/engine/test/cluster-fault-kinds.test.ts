// The bundled cluster's own fault kinds (issue 19, item 3): isolate a node from its peers or its
// clients, slow its disk, restart every node in turn, move leaders back to the preferred replicas.
// Each test is a short run on a real in-process cluster and checks the fault's effect in the run's
// figures, with generous margins: effects, not speeds.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseScenario, type Sample } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioRun, unsupportedIssues } from '../src/index.js';
import { electedPartitions } from '../src/target.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-fault-kinds-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** Samples whose interval ended inside [from, to] seconds. */
const within = (samples: Sample[], from: number, to: number) =>
  samples.filter((s) => s.t > from && s.t <= to);
const node = (s: Sample, id: number) => s.broker?.find((b) => b.node === id);

describe('bundled cluster fault kinds', () => {
  it('slow-disk: 20 ms added to each durable write raises publish p99 under fsync batch', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '3s',
        cluster: { nodes: 1, fsync: 'batch' },
        producers: { count: 1, acks: 1, messageSize: 100, rate: 200 },
        faults: [{ at: '0s', action: 'slow-disk', node: 1, delay: '20ms' }],
      }),
      { runId: 'slowdisk', workDir },
    ).execute();
    expect(outcome.error).toBeNull();
    expect(outcome.faults).toMatchObject([{ action: 'slow-disk', node: 1, durationMs: null, error: null }]);
    // Every acknowledged batch waited for its fdatasync, and each of those for the delay.
    expect(outcome.summary?.publishLatencyMs?.p99).toBeGreaterThan(10);
    const syncs = outcome.samples.map((s) => node(s, 1)).filter((b) => (b?.fsyncs ?? 0) > 0);
    expect(syncs.length).toBeGreaterThan(0);
    for (const b of syncs) expect(b?.fsyncMeanMs).toBeGreaterThanOrEqual(19);
  });

  it('isolate from peers: the node falls out of the ISR and acks=all publishes stall or fail while it lasts', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '6s',
        cluster: { nodes: 2 },
        // Two partitions over two nodes: each node leads one and follows the other.
        topics: { partitions: 2, replicationFactor: 2, minInsyncReplicas: 2 },
        producers: { count: 1, acks: 'all', messageSize: 100, rate: 500 },
        faults: [{ at: '1s', action: 'isolate', node: 2, from: 'peers', for: '3s' }],
      }),
      { runId: 'isolate-peers', workDir },
    ).execute();
    expect(outcome.status).toBe('completed');
    const [fault] = outcome.faults;
    expect(fault).toMatchObject({ action: 'isolate', node: 2, durationMs: 3000, error: null });
    const during = within(outcome.samples, fault?.t ?? 1, (fault?.t ?? 1) + 3);
    // Node 1 leads a partition node 2 no longer replicates: under-replicated while it lasts.
    expect(during.some((s) => (node(s, 1)?.underReplicated ?? 0) > 0)).toBe(true);
    // acks=all with min ISR 2: publishes wait or fail; some interval acknowledges nothing or has errors.
    expect(during.some((s) => s.producedRecords === 0 || s.errors > 0)).toBe(true);
    const before = within(outcome.samples, 0, fault?.t ?? 1);
    expect(before.every((s) => (node(s, 1)?.underReplicated ?? 0) === 0)).toBe(true);
  });

  it('isolate from clients: the node drops client connections while its replicas stay in sync', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '4s',
        driver: 'native',
        cluster: { nodes: 2 },
        topics: { partitions: 2, replicationFactor: 2, minInsyncReplicas: 2 },
        producers: { count: 1, acks: 'all', messageSize: 100, rate: 500 },
        faults: [{ at: '1s', action: 'isolate', node: 2, from: 'clients', for: '2s' }],
      }),
      { runId: 'isolate-clients', workDir },
    ).execute();
    expect(outcome.status).toBe('completed');
    const [fault] = outcome.faults;
    expect(fault).toMatchObject({ action: 'isolate', node: 2, durationMs: 2000, error: null });
    const during = within(outcome.samples, (fault?.t ?? 1) + 0.2, (fault?.t ?? 1) + 2);
    expect(during.length).toBeGreaterThan(0);
    // No client request reaches node 2 (replica fetches from node 1 still do)...
    expect(during.some((s) => s.producedRecords === 0 || s.errors > 0)).toBe(true);
    // ...while replication goes on: no partition under-replicated on either node.
    for (const s of outcome.samples) {
      expect(node(s, 1)?.underReplicated ?? 0).toBe(0);
      expect(node(s, 2)?.underReplicated ?? 0).toBe(0);
    }
  });

  it('rolling-restart restarts every node in turn; preferred-leaders moves leaders back after a kill and restart', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '12s',
        cluster: { nodes: 3 },
        topics: { partitions: 3, replicationFactor: 3, minInsyncReplicas: 2 },
        producers: { count: 1, acks: 'all', messageSize: 100, rate: 500 },
        faults: [
          { at: '500ms', action: 'kill', node: 'leader:0-0' },
          { at: '3s', action: 'restart', node: 'leader:0-0' },
          { at: '5s', action: 'preferred-leaders' },
          { at: '5500ms', action: 'rolling-restart' },
        ],
      }),
      { runId: 'rolling', workDir },
    ).execute();
    expect(outcome.status).toBe('completed');
    const byAction = Object.fromEntries(outcome.faults.map((f) => [f.action, f]));
    expect(byAction.kill?.error).toBeNull();
    expect(byAction.restart?.error).toBeNull();
    // The killed leader is back and preferred for partition 0 at least: leadership moved back.
    expect(byAction['preferred-leaders']).toMatchObject({ error: null, node: null });
    expect(byAction['preferred-leaders']?.moved).toBeGreaterThanOrEqual(1);
    // Partition 0 went back to the node killed and restarted, from the one that took it over.
    const back = byAction['preferred-leaders']?.moves?.find((m) => m.partition === 0);
    expect(back).toMatchObject({ topic: 'kbench-rolling-0', to: byAction.kill?.node });
    expect([1, 2, 3].filter((n) => n !== byAction.kill?.node)).toContain(back?.from);
    const rolling = byAction['rolling-restart'];
    expect(rolling?.error).toBeNull();
    expect(rolling?.steps?.map((s) => s.node)).toEqual([1, 2, 3]);
    for (const step of rolling?.steps ?? []) {
      expect(step.error).toBeNull();
      expect(step.upT).toBeGreaterThanOrEqual(step.t);
      expect(step.inSyncT).toBeGreaterThanOrEqual(step.upT ?? 0);
    }
    // Each node restarted only once the one before it was back in sync.
    const steps = rolling?.steps ?? [];
    for (let i = 1; i < steps.length; i++)
      expect(steps[i]?.t).toBeGreaterThanOrEqual(steps[i - 1]?.inSyncT ?? 0);
  });
});

describe('refusals of fault kinds, before any load', () => {
  const issues = (input: Parameters<typeof parseScenario>[0]) => unsupportedIssues(parseScenario(input));

  it('a node the run cluster does not have, naming the field and the node count', () => {
    expect(
      issues({
        cluster: { nodes: 3 },
        faults: [
          { at: '1s', action: 'slow-disk', node: 1, delay: '5ms' },
          { at: '1s', action: 'isolate', node: 3 },
          { at: '2s', action: 'isolate', node: 4, from: 'clients' },
        ],
      }),
    ).toEqual([{ path: 'faults[2].node', message: 'node 4 does not exist: cluster.nodes is 3' }]);
  });

  it('a bundled-only fault kind on the kafka target, and any node fault on an external one', () => {
    expect(
      issues({
        target: 'kafka',
        cluster: { nodes: 3 },
        faults: [
          { at: '1s', action: 'kill', node: 1 },
          { at: '2s', action: 'slow-disk', node: 2, delay: '5ms' },
        ],
      }),
    ).toEqual([
      {
        path: 'faults[1].action',
        message:
          "slow-disk needs target bundled: only the bundled cluster, which runs in kbench's process, takes isolate, heal, slow-disk; the kafka target takes kill, pause, restart, rolling-restart, preferred-leaders and command",
      },
    ]);
    expect(issues({ target: 'localhost:9092', faults: [{ at: '1s', action: 'preferred-leaders' }] })).toEqual(
      [
        {
          path: 'faults',
          message: expect.stringMatching(
            /^kill, pause, restart, isolate, heal, slow-disk, rolling-restart, preferred-leaders faults need target bundled or kafka/,
          ),
        },
      ],
    );
  });
});

describe('electedPartitions', () => {
  it("names the partitions Kafka's leader election tool moved", () => {
    expect(
      electedPartitions(
        'Successfully completed leader election (PREFERRED) for partitions kbench-a-0-0, __consumer_offsets-17\nValid replica already elected for partitions kbench-a-0-1\n',
      ),
    ).toEqual([
      { topic: 'kbench-a-0', partition: 0 },
      { topic: '__consumer_offsets', partition: 17 },
    ]);
    expect(electedPartitions('Valid replica already elected for partitions kbench-a-0-0\n')).toEqual([]);
  });
});
