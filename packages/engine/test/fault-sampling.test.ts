// Fine samples around a fault, on the real bundled cluster: a 1 s pause of the leader shows in the
// stored samples as about a second of 100 ms samples with no acknowledgement. Only what the stored
// data shows is asserted, with generous bounds (the machine is shared; timers fire late).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, type Sample } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordedRun } from '../src/index.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-fault-sampling-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** The longest run of consecutive samples with no acknowledgement, as [first, last] indexes. */
function longestStall(samples: Sample[]): [number, number] | null {
  let best: [number, number] | null = null;
  let start = -1;
  samples.forEach((s, i) => {
    if (s.producedRecords > 0) {
      start = -1;
      return;
    }
    if (start < 0) start = i;
    if (best === null || i - start > best[1] - best[0]) best = [start, i];
  });
  return best;
}

describe('samples around a fault', () => {
  it('a 1 s pause of the leader at 1 s sampling: 100 ms samples around it, about a second of them empty', async () => {
    const history = await History.open(path.join(workDir, 'history.duckdb'));
    const live = await startRecordedRun(
      parseScenario({
        duration: '11s',
        cluster: { nodes: 3 },
        topics: { partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 },
        producers: { count: 1, acks: 'all', messageSize: 100, rate: 2000 },
        faults: [{ at: '3s', action: 'pause', node: 'leader:0-0', for: '1s' }],
      }),
      { history, workDir },
    );
    const record = await live.done;
    expect(record.error).toBeNull();
    expect(record.faults?.map((f) => [f.action, f.error])).toEqual([['pause', null]]);
    const samples = await history.getSamples(record.id);

    // Fine samples (well under a second) lie in the fault's window: from 3 s to 5 s after the pause ends.
    const fine = samples.filter((s) => s.intervalMs < 500);
    expect(fine.length).toBeGreaterThanOrEqual(30);
    for (const s of fine) {
      expect(s.t).toBeGreaterThan(2.9);
      expect(s.t).toBeLessThan(9.6);
    }
    // Their spacing, from the stored times: 100 ms apart in the main.
    const gaps = fine.slice(1).map((s, i) => s.t - (fine[i] as Sample).t);
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] as number;
    expect(median).toBeGreaterThan(0.05);
    expect(median).toBeLessThan(0.2);
    // Before and after, the scenario's second.
    const outside = samples.filter((s) => s.t < 2.9 || s.t > 9.6).slice(0, -1);
    expect(outside.filter((s) => s.t < 2.9).length).toBeGreaterThanOrEqual(2);
    expect(outside.filter((s) => s.t > 9.6).length).toBeGreaterThanOrEqual(1);
    for (const s of outside) expect(s.intervalMs).toBeGreaterThan(800);

    // The pause: consecutive fine samples with no acknowledgement, spanning about its length.
    const stall = longestStall(samples);
    expect(stall).not.toBeNull();
    const [first, last] = stall as [number, number];
    const empty = samples.slice(first, last + 1);
    expect(empty.every((s) => s.intervalMs < 500)).toBe(true);
    const spanMs = empty.reduce((sum, s) => sum + s.intervalMs, 0);
    expect(spanMs).toBeGreaterThanOrEqual(500);
    expect(spanMs).toBeLessThanOrEqual(3000);
    // Acknowledgements resume afterwards, still inside the fine window.
    expect(samples[last + 1]?.producedRecords).toBeGreaterThan(0);

    // The fault's recovery figures say the same: about a second without acknowledgements (the
    // pause's own length, not a speed), and the level to recover to is the open-loop rate.
    const recovery = record.faults?.[0]?.recovery;
    expect(recovery?.noAckSec).toBeGreaterThanOrEqual(0.5);
    expect(recovery?.noAckSec).toBeLessThanOrEqual(3);
    expect(recovery?.levelPerSec).toBe(2000);
    expect(recovery?.recoverySec).toBeGreaterThanOrEqual(recovery?.noAckSec ?? 0);
    expect(recovery?.publishMaxMs).toBeGreaterThan(400);
  });
});
