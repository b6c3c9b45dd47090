// The bundled cluster (several in-process nodes) and the fault timeline, against the real broker.
// No timing assertions: what is checked is that runs complete and record what happened.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { type FaultEvent, faultText, parseScenario, ScenarioError, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioRun, startRecordedRun, unsupportedIssues } from '../src/index.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-cluster-test-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

function issuePaths(input: ScenarioInput): string[] {
  try {
    return unsupportedIssues(parseScenario(input)).map((i) => i.path);
  } catch (err) {
    if (err instanceof ScenarioError) return err.issues.map((i) => i.path);
    throw err;
  }
}

describe('the bundled cluster', () => {
  it('runs acks=all to topics replicated on three nodes', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '3s',
        cluster: { nodes: 3 },
        topics: { partitions: 3, replicationFactor: 3, minInsyncReplicas: 2 },
        producers: { count: 1, acks: 'all', messageSize: 100 },
        consumers: { count: 1 },
      }),
      { runId: 'rf3', workDir },
    ).execute();
    expect(outcome.error).toBeNull();
    expect(outcome.status).toBe('completed');
    expect(outcome.environment.bootstrap.split(',')).toHaveLength(3);
    expect(outcome.summary?.produced.recordsPerSec).toBeGreaterThan(0);
    expect(outcome.summary?.consumed.records).toBeGreaterThan(0);
    expect(outcome.faults).toEqual([]);
  });

  it('kills the leader of a partition and restarts it, recording both faults and broker figures', async () => {
    const history = await History.open(path.join(workDir, 'history.duckdb'));
    const live = await startRecordedRun(
      parseScenario({
        duration: '8s',
        // The native producer counts the records it sends again (the recovery figures' retries).
        driver: 'native',
        cluster: { nodes: 3 },
        topics: { partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 },
        producers: { count: 1, acks: 'all', messageSize: 100, rate: 2000 },
        faults: [
          { at: '2s', action: 'kill', node: 'leader:0-0' },
          // Late enough for the kill's recovery (an election takes about the 2 s session timeout).
          { at: '6.5s', action: 'restart', node: 'leader:0-0' },
        ],
      }),
      { history, workDir },
    );
    const record = await live.done;
    expect(record.error).toBeNull();
    expect(record.status).toBe('completed');
    const faults = record.faults ?? [];
    expect(faults.map((f) => f.action)).toEqual(['kill', 'restart']);
    const [kill, restart] = faults;
    expect(kill?.error).toBeNull();
    expect(kill?.node).toBeGreaterThanOrEqual(1);
    expect(kill?.node).toBeLessThanOrEqual(3);
    expect(kill?.target).toBe('leader:0-0');
    expect(kill?.t).toBeGreaterThanOrEqual(2);
    // A restart of a leader: reference brings back the node an earlier fault of it resolved to.
    expect(restart?.node).toBe(kill?.node);
    expect(restart?.error).toBeNull();
    const stored = await history.getRun(record.id);
    expect(stored?.faults).toEqual(faults);
    const samples = await history.getSamples(record.id);
    expect(samples.length).toBeGreaterThan(0);
    const nodes = new Set(samples.flatMap((s) => (s.broker ?? []).map((b) => b.node)));
    expect([...nodes].sort()).toEqual([1, 2, 3]);
    const first = samples[0]?.broker?.[0];
    expect(first?.bytesInPerSec).toBeGreaterThanOrEqual(0);
    expect(first?.logSizeBytes).toBeGreaterThanOrEqual(0);
    // While the killed node is down, samples list the other two only.
    expect(samples.some((s) => s.broker && s.broker.length === 2)).toBe(true);
    // What the kill cost (docs/scenarios.md#recovery-figures): present and plausible, within loose bounds.
    const cost = kill?.recovery;
    expect(cost).toBeDefined();
    // A new leader, within the cluster's 2 s session timeout plus detection and polling.
    expect(cost?.leaderElectionMs).toBeGreaterThan(0);
    expect(cost?.leaderElectionMs).toBeLessThan(5000);
    expect(cost?.leaderNote).toBeNull();
    // Acks stopped for a while, shorter than the run.
    expect(cost?.noAckSec).toBeGreaterThan(0);
    expect(cost?.noAckSec).toBeLessThan(8);
    // Throughput back to 90% of the open-loop rate before the restart.
    expect(cost?.levelPerSec).toBe(2000);
    expect(cost?.recoveryNote).toBeNull();
    expect(cost?.recoverySec).toBeGreaterThanOrEqual(cost?.noAckSec ?? 0);
    expect(cost?.recoverySec).toBeLessThan(3.5);
    // The records that waited out the election are in the window's worst publish latency.
    expect(cost?.publishMaxMs).toBeGreaterThan(0);
    expect(cost?.windowEndT).toBeGreaterThan(kill?.t ?? 0);
    // The clients' errors talking to the killed leader; the records the native producer sent again
    // (those in flight when the connection died: often none at this rate, so only counted here).
    expect(cost?.errors).toBeGreaterThan(0);
    expect(cost?.retries).toBeGreaterThanOrEqual(0);
    // What the measured phase's errors said: every one of them, by message (summary.clientErrors).
    const said = record.summary?.clientErrors ?? [];
    expect(said.length).toBeGreaterThan(0);
    expect(said.reduce((sum, e) => sum + e.count, 0)).toBe(record.summary?.produced.errors);
    expect(said.every((e) => e.message.length > 0 && e.count > 0)).toBe(true);
    // A restart brings a node back: no election of its own to measure, and the note says why.
    expect(restart?.recovery?.leaderElectionMs).toBeNull();
    expect(restart?.recovery?.leaderNote).toMatch(/a restart brings a node back/);
  });

  it('pauses a node, kills another by id and leaves it down', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '3s',
        cluster: { nodes: 2 },
        topics: { partitions: 2, replicationFactor: 2 },
        producers: { count: 1, acks: 1, rate: 1000 },
        faults: [
          { at: '1s', action: 'pause', node: 1, for: '500ms' },
          { at: '1500ms', action: 'kill', node: 2 },
        ],
      }),
      { runId: 'kill2', workDir },
    ).execute();
    expect(outcome.status).toBe('completed');
    expect(outcome.faults).toHaveLength(2);
    expect(outcome.faults[0]).toMatchObject({ action: 'pause', node: 1, durationMs: 500, error: null });
    expect(outcome.faults[1]).toMatchObject({
      action: 'kill',
      node: 2,
      target: 2,
      durationMs: null,
      error: null,
    });
    expect(outcome.samples.at(-1)?.broker?.map((b) => b.node)).toEqual([1]);
  });
});

describe('two faults on one node', () => {
  it('a kill due while a restart of the node is under way waits for it, and is timed from when it acted', async () => {
    const outcome = await new ScenarioRun(
      parseScenario({
        duration: '4s',
        cluster: { nodes: 3 },
        topics: { partitions: 3, replicationFactor: 3, minInsyncReplicas: 2 },
        producers: { count: 1, acks: 'all', rate: 1000 },
        faults: [
          { at: '1s', action: 'restart', node: 2 },
          // Due a millisecond later: the restart (stopping the node, then starting it on its data and
          // port) is still under way.
          { at: '1001ms', action: 'kill', node: 2 },
        ],
      }),
      { runId: 'busy-node', workDir },
    ).execute();
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const [restart, kill] = outcome.faults;
    expect(restart).toMatchObject({ action: 'restart', node: 2, error: null });
    expect(restart?.waitedMs).toBeUndefined();
    expect(kill).toMatchObject({ action: 'kill', node: 2, error: null });
    // It waited for the restart, and its t is when it acted: after the restart began.
    expect(kill?.waitedMs).toBeGreaterThanOrEqual(0);
    expect(kill?.t).toBeGreaterThanOrEqual(restart?.t ?? Number.POSITIVE_INFINITY);
    expect(faultText(kill as FaultEvent)).toMatch(
      /^kill node 2 \(after (\d+ ms|\d+(\.\d)? s) waiting for the fault before it on the node to end\)$/,
    );
    // The kill landed on the node the restart had started: node 2 is down at the end.
    expect(outcome.samples.at(-1)?.broker?.map((b) => b.node)).toEqual([1, 3]);
  });
});

describe('refusals', () => {
  it('a pause without for, by field path', () => {
    expect(issuePaths({ cluster: { nodes: 3 }, faults: [{ at: '1s', action: 'pause', node: 1 }] })).toContain(
      'faults[0].for',
    );
  });

  it('faults on a target kbench did not start (and on the kafka target, which it did)', () => {
    expect(issuePaths({ target: 'localhost:9092', faults: [{ at: '1s', action: 'kill', node: 1 }] })).toEqual(
      ['faults'],
    );
    // kafka is a cluster kbench started: its faults are in managed-kafka-faults.test.ts.
    expect(issuePaths({ target: 'kafka', faults: [{ at: '1s', action: 'kill', node: 1 }] })).toEqual([]);
  });

  it('a node or topic the run does not have', () => {
    expect(
      issuePaths({
        cluster: { nodes: 2 },
        faults: [
          { at: '1s', action: 'kill', node: 3 },
          { at: '1s', action: 'kill', node: 'leader:t-0' },
          { at: '1s', action: 'kill', node: 'leader:kbench-0-7' },
        ],
      }),
    ).toEqual(['faults[0].node', 'faults[1].node', 'faults[2].node']);
    expect(
      issuePaths({
        cluster: { nodes: 2 },
        faults: [{ at: '1s', action: 'kill', node: 'leader:kbench-0-0' }],
      }),
    ).toEqual([]);
  });
});
