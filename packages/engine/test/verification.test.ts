// The record check (issue 19) against the bundled cluster and the native engine: every run with faults
// reads the log after load and counts acknowledged records lost, duplicated and reordered.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseScenario, ScenarioError, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioRun } from '../src/index.js';
import { judge } from '../src/verification.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-verify-test-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

const run = (runId: string, input: ScenarioInput) =>
  new ScenarioRun(parseScenario(input), { runId, workDir }).execute();

describe('the record check', () => {
  it('finds every acknowledged record once, in order, after the leader of an acks=all idempotent partition is killed', async () => {
    const outcome = await run('verify-kill', {
      driver: 'native',
      duration: '6s',
      cluster: { nodes: 3 },
      topics: { partitions: 2, replicationFactor: 3, minInsyncReplicas: 2 },
      producers: { count: 1, acks: 'all', idempotence: true, messageSize: 100, rate: 4000 },
      faults: [
        { at: '1.5s', action: 'kill', node: 'leader:0-0' },
        { at: '4.5s', action: 'restart', node: 'leader:0-0' },
      ],
    });
    expect(outcome.error).toBeNull();
    expect(outcome.faults.map((f) => [f.action, f.error])).toEqual([
      ['kill', null],
      ['restart', null],
    ]);
    const v = outcome.summary?.verification;
    expect(v?.statement).toMatch(/^passed: all [\d,]+ acknowledged records found once each, in order/);
    expect(v?.verdict).toBe('passed');
    expect(v?.allows).toEqual({ lost: null, duplicated: null, reordered: null });
    const totals = v?.totals;
    // Records were acknowledged before and after the kill (the run acknowledged what the summary counts and more).
    expect(totals?.acknowledged).toBeGreaterThanOrEqual(outcome.summary?.produced.records ?? Infinity);
    expect(totals?.found).toBe(totals?.acknowledged);
    expect([totals?.lost, totals?.duplicated, totals?.reordered, totals?.foreign]).toEqual([0, 0, 0, 0]);
    expect(v?.partitions.map((p) => `${p.topic}:${p.partition}`)).toEqual([
      'kbench-verify-kill-0:0',
      'kbench-verify-kill-0:1',
    ]);
    for (const p of v?.partitions ?? []) expect(p.acknowledged).toBeGreaterThan(0);
  });

  it('reports the loss an acks=1 leader killed while its only follower was paused caused, as allowed by acks=1', async () => {
    // Two nodes, the topic's one partition on both: its replicas are [1, 2] (the first topic of a new
    // cluster starts at the first node), so node 1 leads and node 2 follows. Node 2 is paused (shorter than
    // the 2 s session timeout and the 3 s replica lag, so it stays alive and in sync) and the leader is
    // killed while it is: what node 1 acknowledged meanwhile never reached node 2, which is elected.
    const outcome = await run('verify-acks1', {
      driver: 'native',
      duration: '6s',
      cluster: { nodes: 2 },
      topics: { partitions: 1, replicationFactor: 2, minInsyncReplicas: 1 },
      producers: { count: 1, acks: 1, messageSize: 64, rate: 4000 },
      faults: [
        { at: '1s', action: 'pause', node: 2, for: '1.2s' },
        { at: '1.5s', action: 'kill', node: 'leader:0-0' },
      ],
    });
    expect(outcome.error).toBeNull();
    const [pause, kill] = outcome.faults;
    expect([pause?.error, kill?.error]).toEqual([null, null]);
    expect(kill?.node).toBe(1);
    const v = outcome.summary?.verification;
    expect(v?.verdict).toBe('allowed');
    expect(v?.allows.lost).toBe('acks=1');
    const lost = v?.totals?.lost ?? 0;
    expect(lost).toBeGreaterThan(0);
    expect(v?.statement).toContain(`${lost.toLocaleString('en-US')} lost, allowed by acks=1`);
    expect(v?.partitions[0]?.lost).toBe(lost);
    expect(v?.totals?.found).toBe((v?.totals?.acknowledged ?? 0) - lost);
  });

  it('says a run stopped before its record check was not checked', async () => {
    const live = new ScenarioRun(
      parseScenario({ driver: 'native', verify: true, duration: '30s', producers: { count: 1, rate: 1000 } }),
      { runId: 'verify-stopped', workDir },
    );
    live.on('sample', () => live.stop());
    const outcome = await live.execute();
    expect(outcome.status).toBe('stopped');
    expect(outcome.summary?.verification?.verdict).toBe('not-run');
    expect(outcome.summary?.verification?.statement).toBe(
      'the record check did not run: the run was stopped before it',
    );
  });

  it('refuses verify: true on the kafkajs driver, naming the field', () => {
    const refused = (input: ScenarioInput) => {
      try {
        new ScenarioRun(parseScenario(input), { runId: 'x', workDir });
      } catch (err) {
        if (err instanceof ScenarioError) return err.issues.map((i) => `${i.path}: ${i.message}`);
        throw err;
      }
      return [];
    };
    expect(refused({ verify: true })).toEqual([
      'verify: verify: true needs driver: native, whose producers mark each record (driver is kafkajs; --set driver=native)',
    ]);
    // On load agents the check runs (apps/cli/test/agents.test.ts): not refused.
    expect(
      () =>
        new ScenarioRun(parseScenario({ verify: true, driver: 'native' }), {
          runId: 'x',
          workDir,
          agents: [{ address: '127.0.0.1:9', roles: ['producers', 'consumers'] }],
          agentToken: 'token',
        }),
    ).not.toThrow();
    expect(refused({ verify: true, driver: 'native', producers: { messageSize: 16 } })).toEqual([
      'producers.messageSize: the record check (verify) needs values of 24 bytes or more (an 8-byte send time and a 16-byte mark; the smallest is 16)',
    ]);
  });

  it('says on kafkajs that a run with faults was not checked, and why', async () => {
    const outcome = await run('verify-kafkajs', {
      duration: '2s',
      producers: { count: 1, rate: 500 },
      faults: [{ at: '1s', action: 'command', run: 'true' }],
    });
    expect(outcome.error).toBeNull();
    expect(outcome.summary?.verification).toEqual({
      verdict: 'not-run',
      statement:
        'the record check did not run: the record check needs driver: native, whose producers mark each record (driver is kafkajs)',
      allows: {
        lost: 'acks=1',
        duplicated: 'idempotence off (a retried send can land twice)',
        reordered: 'idempotence off with maxInFlight 5 (a retried request can land after a later one)',
      },
      totals: null,
      partitions: [],
    });
  });

  it('judges misses by what the settings allow: failed under acks=all, min ISR 2 and idempotence; allowed under acks=1', () => {
    const partition = (lost: number, duplicated: number, reordered: number) => ({
      topic: 't',
      partition: 0,
      acknowledged: 1000,
      found: 1000 - lost,
      lost,
      duplicated,
      reordered,
      unacknowledgedPresent: 2,
      foreign: 0,
    });
    const strict = parseScenario({
      driver: 'native',
      cluster: { nodes: 3 },
      topics: { replicationFactor: 3, minInsyncReplicas: 2 },
      producers: { acks: 'all', idempotence: true },
    });
    const failed = judge(strict, [partition(3, 1, 0)]);
    expect(failed.verdict).toBe('failed');
    expect(failed.statement).toBe(
      'FAILED: 3 lost; 1 duplicated (of 1,000 acknowledged), which the settings (acks=all, min.insync.replicas=2, idempotence on) do not allow; 2 unacknowledged send(s) landed (normal, not judged)',
    );
    const loose = parseScenario({ driver: 'native', producers: { acks: 1, maxInFlight: 1 } });
    const allowed = judge(loose, [partition(3, 1, 0)]);
    expect(allowed.verdict).toBe('allowed');
    expect(allowed.statement).toBe(
      '3 lost, allowed by acks=1; 1 duplicated, allowed by idempotence off (a retried send can land twice) (of 1,000 acknowledged); 2 unacknowledged send(s) landed (normal, not judged)',
    );
    // A reorder with one request in flight is not allowed even without idempotence.
    expect(judge(loose, [partition(0, 0, 4)]).verdict).toBe('failed');
    expect(
      judge(strict, [partition(0, 0, 0), { ...partition(0, 0, 0), partition: 1 }]).totals?.acknowledged,
    ).toBe(2000);
  });
});
