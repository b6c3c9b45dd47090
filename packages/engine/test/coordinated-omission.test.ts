// A broker that stalls for a second must show up in the latency of a fixed-rate run, because each
// record's latency counts from when it was due, not from when the stalled client got round to it.
// The broker is the standalone binary, paused for real with SIGSTOP.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseScenario, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioRun } from '../src/index.js';

const BINARY = fileURLToPath(new URL('../../../broker-native/target/release/kbench-broker', import.meta.url));

let dataDir: string;
let broker: ChildProcess;
let bootstrap: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-co-test-'));
  broker = spawn(BINARY, ['--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    broker.once('error', reject);
    createInterface({ input: broker.stdout! }).once('line', resolve);
  });
  const match = /^node \d+ (\S+) pid \d+$/.exec(line);
  if (!match) throw new Error(`unexpected broker line: ${line}`);
  bootstrap = match[1] as string;
});

afterAll(async () => {
  broker.kill('SIGCONT');
  // The broker writes its clean-shutdown files as it stops: wait for it before removing its data.
  const exited = broker.exitCode === null ? once(broker, 'exit') : Promise.resolve();
  broker.kill('SIGTERM');
  await exited;
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs a scenario and pauses the broker process for `pauseMs` once `atSeconds` of load have passed. */
async function runWithPause(input: ScenarioInput, atSeconds: number, pauseMs: number) {
  const run = new ScenarioRun(parseScenario({ ...input, target: bootstrap }), { runId: `co${Date.now()}` });
  let paused = false;
  run.on('sample', (sample: { t: number }) => {
    if (paused || sample.t < atSeconds) return;
    paused = true;
    broker.kill('SIGSTOP');
    setTimeout(() => broker.kill('SIGCONT'), pauseMs);
  });
  const outcome = await run.execute();
  expect(paused).toBe(true);
  return outcome;
}

describe('coordinated omission', () => {
  it('a fixed-rate run reports the 1 s stall at p99.9', async () => {
    const outcome = await runWithPause({ duration: '6s', producers: { count: 1, rate: 2000 } }, 2, 1000);
    expect(outcome.status).toBe('completed');
    expect(outcome.summary?.publishLatencyMs?.p999).toBeGreaterThanOrEqual(900);
  });

  it('a closed-loop run, as fast as acks come back, does not claim the same latency', async () => {
    const outcome = await runWithPause({ duration: '6s', producers: { count: 1, rate: 'max' } }, 2, 1000);
    expect(outcome.status).toBe('completed');
    // Only the records in flight during the pause waited; the rest never saw it.
    expect(outcome.summary?.publishLatencyMs?.p99).toBeLessThan(900);
  });
});
