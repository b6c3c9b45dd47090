// Runs real scenarios against the real bundled broker with kafkajs. No timing assertions:
// figures are checked for consistency, not speed.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startBroker } from '@kbench/broker-native';
import { History } from '@kbench/history';
import { machineShareWarning, parseScenario, ScenarioError, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diskOf, ScenarioRun, startRecordedRun } from '../src/index.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-engine-test-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

function run(input: ScenarioInput, runId = Math.random().toString(16).slice(2, 10)) {
  return new ScenarioRun(parseScenario(input), { runId, workDir }).execute();
}

describe('ScenarioRun against the bundled broker', () => {
  it('produces and consumes for the given duration, with warm-up flagged', async () => {
    const outcome = await run({
      duration: '4s',
      warmup: '1s',
      topics: { partitions: 3 },
      producers: { count: 1, messageSize: 100 },
      consumers: { count: 1 },
    });
    expect(outcome.error).toBeNull();
    expect(outcome.status).toBe('completed');
    expect(outcome.samples.length).toBeGreaterThanOrEqual(3);
    expect(outcome.samples[0]?.warmup).toBe(true);
    expect(outcome.samples.at(-1)?.warmup).toBe(false);
    const summary = outcome.summary;
    expect(summary?.produced.records).toBeGreaterThan(0);
    expect(summary?.consumed.records).toBeGreaterThan(0);
    expect(summary?.publishLatencyMs?.p50).toBeGreaterThan(0);
    expect(summary?.endToEndLatencyMs?.p99).toBeGreaterThan(0);
    const measured = outcome.samples.filter((s) => !s.warmup).reduce((n, s) => n + s.producedRecords, 0);
    expect(summary?.produced.records).toBe(measured);
    expect(summary?.produced.mbPerSec).toBeCloseTo((summary!.produced.recordsPerSec * 100) / 1024 / 1024, 2);
    expect(outcome.environment.target).toBe('bundled');
    expect(summary?.client?.cpuCores).toBeGreaterThan(0);
    expect(summary?.client?.includesBroker).toBe(true);
    expect(summary?.client?.producerBusy).toBeGreaterThan(0);
    expect(summary?.client?.producerBusy).toBeLessThanOrEqual(1);
    expect(summary?.client?.consumerBusy).toBeGreaterThan(0);
    expect(outcome.environment.versions.kbench).toMatch(/^\d+\.\d+\.\d+/);
    expect(outcome.environment.versions.kafkajs).toMatch(/^2\./);
  });

  it('stops after exactly the requested number of records', async () => {
    const outcome = await run({ records: 5000, producers: { count: 2, messageSize: 64 } });
    expect(outcome.status).toBe('completed');
    const total = outcome.samples.reduce((n, s) => n + s.producedRecords, 0);
    expect(total).toBe(5000);
  });

  it('never sends faster than a fixed rate allows', async () => {
    const outcome = await run({ duration: '3s', producers: { count: 1, rate: 2000, messageSize: 100 } });
    expect(outcome.status).toBe('completed');
    const total = outcome.samples.reduce((n, s) => n + s.producedRecords, 0);
    expect(total).toBeGreaterThan(0);
    // The schedule is 2000/s for 3 s; one 5 ms batch of slack at the end.
    expect(total).toBeLessThanOrEqual(6000 + 10);
  });

  it('sends acks=0 and acks=all as well as acks=1', async () => {
    for (const acks of [0, 'all'] as const) {
      const outcome = await run({ records: 2000, producers: { acks } });
      expect(outcome.status, `acks=${acks}: ${outcome.error}`).toBe('completed');
    }
  });

  it('measures acks=0 on kafkajs after warm-up: each sample gets its counts as load goes', async () => {
    const outcome = await run({
      driver: 'kafkajs',
      duration: '4s',
      warmup: '1s',
      producers: { count: 1, acks: 0, messageSize: 100 },
      consumers: { count: 1 },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const measured = outcome.samples.filter((s) => !s.warmup);
    expect(measured.length).toBeGreaterThanOrEqual(2);
    expect(outcome.summary?.produced.recordsPerSec).toBeGreaterThan(0);
    expect(outcome.summary?.produced.records).toBe(measured.reduce((n, s) => n + s.producedRecords, 0));
    expect(outcome.summary?.consumed.records).toBeGreaterThan(0);
  });

  it('a run whose records are all sent during warm-up measured nothing: failed, saying why', async () => {
    const outcome = await run({ records: 50, warmup: '30s', producers: { count: 1 } });
    expect(outcome.status).toBe('failed');
    expect(outcome.summary).toBeNull();
    expect(outcome.samples.every((s) => s.warmup)).toBe(true);
    expect(outcome.error).toMatch(/no measured sample/);
    expect(outcome.error).toMatch(/warm-up/);
  });

  for (const driver of ['kafkajs', 'native'] as const)
    it(`preloads a backlog that consumers starting at the earliest offset drain, its age not taken for end-to-end latency (${driver})`, async () => {
      const outcome = await run({
        driver,
        duration: '4s',
        warmup: '0s',
        producers: { count: 1, rate: 500, messageSize: 100 },
        consumers: { count: 1, startAt: 'backlog', backlog: '1MB' },
      });
      expect(outcome.status, String(outcome.error)).toBe('completed');
      const preloaded = Math.ceil((1024 * 1024) / 100);
      const produced = outcome.samples.reduce((n, s) => n + s.producedRecords, 0);
      const consumed = outcome.samples.reduce((n, s) => n + s.consumedRecords, 0);
      expect(produced).toBeLessThan(preloaded);
      expect(consumed).toBeGreaterThan(preloaded);
      expect(outcome.samples[0]?.backlog).toBeGreaterThanOrEqual(0);
      // Only the records sent while the run was measured have an end-to-end latency: before, every
      // preloaded record counted its age (p50 of 500 ms where the live records took 2).
      const e2e = outcome.summary?.endToEndLatencyMs;
      expect(e2e?.count).toBeGreaterThan(0);
      expect(e2e?.count).toBeLessThanOrEqual(produced);
    });

  it('consumers at the latest offset skip a preloaded backlog', async () => {
    const outcome = await run({
      duration: '3s',
      producers: { count: 1, rate: 500, messageSize: 100 },
      consumers: { count: 1, startAt: 'latest', backlog: '1MB' },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const produced = outcome.samples.reduce((n, s) => n + s.producedRecords, 0);
    const consumed = outcome.samples.reduce((n, s) => n + s.consumedRecords, 0);
    expect(consumed).toBeLessThanOrEqual(produced);
    // The backlog is what these consumers have left to read: the preloaded records are not part of it.
    const preloaded = Math.ceil((1024 * 1024) / 100);
    expect(Math.max(...outcome.samples.map((s) => s.backlog))).toBeLessThan(preloaded);
  });

  it('a run bounded by records ends once its consumers have read every record', async () => {
    const outcome = await run({
      records: 5000,
      producers: { count: 1, messageSize: 100 },
      consumers: { count: 1, groups: 2 },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const consumed = outcome.samples.reduce((n, s) => n + s.consumedRecords, 0);
    expect(consumed).toBe(10_000);
    expect(outcome.samples.at(-1)?.backlog).toBe(0);
    expect(outcome.summary?.endToEndLatencyMs).not.toBeNull();
  });

  it('finds a maximum rate with bounded trials, then measures at it', async () => {
    const outcome = await run({
      duration: '3s',
      producers: { count: 1, rate: 'find-max', messageSize: 100 },
      consumers: { count: 1 },
      // A bound any machine meets, loaded or not: this checks the search's mechanics, not the speed.
      findMax: { trial: '2s', maxTrials: 4, publishP99Ms: 5000 },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const search = outcome.summary?.findMax;
    expect(search?.trials.length).toBeLessThanOrEqual(4);
    expect(search?.trials[0]?.rate).toBeNull();
    expect(search?.rate).toBeGreaterThan(0);
    const passing = search!.trials.filter((t) => t.pass && t.rate !== null).map((t) => t.rate!);
    expect(Math.max(...passing)).toBe(search?.rate);
    // The measured phase runs open loop at the rate found, so it cannot exceed it by more than a batch.
    expect(outcome.summary!.produced.recordsPerSec).toBeLessThanOrEqual(search!.rate! * 1.05);
  });

  it('uses an external broker by bootstrap address and leaves it running', async () => {
    const dataDir = await mkdtemp(path.join(workDir, 'external-'));
    const broker = await startBroker({ dataDir, port: 0 });
    try {
      const outcome = await run({ target: `127.0.0.1:${broker.port}`, records: 1000 });
      expect(outcome.status).toBe('completed');
      expect(outcome.environment.target).toBe('external');
      expect(outcome.environment.bootstrap).toBe(`127.0.0.1:${broker.port}`);
      expect(broker.stats().produceRequests).toBeGreaterThan(0);
      // Its data is not the run's to know: the machine's CPU is read, no disk.
      expect(outcome.summary?.machine).toMatchObject({ disk: null, diskWrittenBytes: null });
    } finally {
      await broker.stop();
    }
  });

  it('fails with a clear error when the bootstrap address answers nothing', async () => {
    const outcome = await run({ target: '127.0.0.1:1', records: 10 });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/ECONNREFUSED|connect/i);
  });

  it('refuses what this engine cannot run, naming the field', () => {
    expect(
      () => new ScenarioRun(parseScenario({ target: 'kafka', cluster: { fsync: 'batch' } }), { runId: 'x' }),
    ).toThrow(ScenarioError);
    try {
      new ScenarioRun(
        parseScenario({ target: 'localhost:9092', faults: [{ at: '1s', action: 'kill', node: 1 }] }),
        {
          runId: 'x',
        },
      );
      expect.unreachable();
    } catch (err) {
      expect((err as ScenarioError).issues.map((i) => i.path)).toContain('faults');
    }
  });

  it('stops early on request with status stopped', async () => {
    const live = new ScenarioRun(parseScenario({ duration: '60s', producers: { count: 1 } }), {
      runId: 'stoptest',
      workDir,
    });
    live.on('sample', () => live.stop());
    const outcome = await live.execute();
    expect(outcome.status).toBe('stopped');
    expect(outcome.samples.length).toBeLessThan(5);
  });
});

describe('the native driver', () => {
  it('produces and consumes through the Rust load engine, with latencies merged into one summary', async () => {
    const outcome = await run({
      driver: 'native',
      duration: '3s',
      warmup: '1s',
      topics: { partitions: 6 },
      producers: { count: 1, messageSize: 100, compression: 'lz4', lingerMs: 1 },
      consumers: { count: 1 },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const summary = outcome.summary!;
    expect(summary.produced.records).toBeGreaterThan(0);
    expect(summary.consumed.records).toBeGreaterThan(0);
    expect(summary.publishLatencyMs?.count).toBe(summary.produced.records);
    expect(summary.endToEndLatencyMs?.p99).toBeGreaterThan(0);
    expect(outcome.environment.driver).toBe('native');
    // lz4 on random values barely compresses, and batches add headers: the wire carries at least the values.
    expect(summary.produced.wireMbPerSec).toBeGreaterThan(summary.produced.mbPerSec * 0.9);
    expect(outcome.environment.versions.loadgen).toMatch(/kbench-loadgen/);
    // How busy each engine task was, as for kafkajs's threads: before, always null for native, so
    // a native run could never say that the client set the pace.
    for (const busy of [summary.client?.producerBusy, summary.client?.consumerBusy]) {
      expect(busy).toBeGreaterThan(0);
      expect(busy).toBeLessThanOrEqual(1);
    }
  });

  it('sends exactly the requested number of records across producers', async () => {
    const outcome = await run({
      driver: 'native',
      records: 100_001,
      producers: { count: 2, acks: 'all', idempotence: true },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    expect(outcome.samples.reduce((n, s) => n + s.producedRecords, 0)).toBe(100_001);
  });

  it('keeps to a fixed rate', async () => {
    const outcome = await run({ driver: 'native', duration: '3s', producers: { rate: 20_000 } });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const total = outcome.samples.reduce((n, s) => n + s.producedRecords, 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(60_000 + 200);
  });
});

describe("the machine's CPU and disk", () => {
  it('are read each sample and over the measured phase: under fsync batch every byte produced reaches the disk', async () => {
    const outcome = await run({
      driver: 'native',
      duration: '4s',
      warmup: '1s',
      cluster: { fsync: 'batch' },
      producers: { rate: 3_000, messageSize: 1024, acks: 'all' },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const machine = outcome.summary?.machine;
    // The run's data directory is under workDir, on this machine's disk.
    expect(machine?.disk).toBe(diskOf(workDir));
    expect(machine?.disk).toMatch(/^[a-z]/);
    expect(machine?.cores).toBe(os.cpus().length);
    expect(machine?.cpuBusy).toBeGreaterThan(0);
    expect(machine?.cpuBusy).toBeLessThanOrEqual(1);
    const measured = outcome.samples.filter((s) => !s.warmup);
    for (const s of outcome.samples) {
      expect(s.machineCpuBusy).toBeGreaterThanOrEqual(0);
      expect(s.machineCpuBusy).toBeLessThanOrEqual(1);
      // Outside the run's own processes: a part of the busy share.
      expect(s.machineOthersBusy).toBeGreaterThanOrEqual(0);
      expect(s.machineOthersBusy).toBeLessThanOrEqual(s.machineCpuBusy ?? 0);
      expect(s.diskWrittenBytes).toBeGreaterThanOrEqual(0);
    }
    expect(machine?.diskWrittenBytes).toBe(measured.reduce((n, s) => n + (s.diskWrittenBytes ?? 0), 0));
    // Each acknowledged record was written to the journal first (and later to its segment): the
    // disk wrote at least the value bytes produced, give or take the records at the phase's edges.
    const produced = measured.reduce((n, s) => n + s.producedBytes, 0);
    expect(produced).toBeGreaterThan(3 * 2_000 * 1024);
    expect(machine?.diskWrittenBytes).toBeGreaterThan(produced * 0.9);
  });
});

describe('a machine shared with something else', () => {
  it('is said: the cores busy outside kbench, and the warning', async () => {
    // Spinners whose parent shell exits at once: no children of this process. At least 15% of the
    // cores, for 6 s of CPU each (or 10 s), while a 3 s run measures.
    const count = Math.max(1, Math.ceil(os.cpus().length * 0.15));
    const spin = `const end = Date.now() + 10000; while (process.cpuUsage().user < 6000000 && Date.now() < end);`;
    const pids = Array.from({ length: count }, () =>
      Number(
        execFileSync('sh', ['-c', `"$0" -e '${spin}' >/dev/null 2>&1 & echo $!`, process.execPath])
          .toString()
          .trim(),
      ),
    );
    try {
      const outcome = await run({ duration: '3s', warmup: '1s', producers: { rate: 1_000 } });
      expect(outcome.status, String(outcome.error)).toBe('completed');
      const others = outcome.summary?.machine?.othersCores ?? 0;
      expect(others).toBeGreaterThanOrEqual(0.5);
      expect(machineShareWarning(outcome.summary!)).toMatch(
        /^something besides this run kept \d+\.\d of this machine's \d+ cores busy on average while it was measured/,
      );
    } finally {
      for (const pid of pids) {
        try {
          process.kill(pid);
        } catch {}
      }
    }
  });
});

describe('startRecordedRun', () => {
  it('stores the run, its samples and its summary in the history', async () => {
    const history = await History.open(path.join(workDir, 'history.duckdb'));
    const live = await startRecordedRun(
      parseScenario({ duration: '3s', warmup: '1s', consumers: { count: 1 } }),
      {
        history,
        source: 'test',
        workDir,
      },
    );
    const running = await history.getRun(live.id);
    expect(running?.status).toBe('running');
    const record = await live.done;
    expect(record.status).toBe('completed');
    const stored = await history.getRun(live.id);
    expect(stored?.status).toBe('completed');
    expect(stored?.summary?.produced.records).toBe(record.summary?.produced.records);
    expect(stored?.environment.bootstrap).toMatch(/^127\.0\.0\.1:\d+$/);
    const samples = await history.getSamples(live.id);
    expect(samples.length).toBe(live.samples().length);
    expect(samples[0]?.warmup).toBe(true);
  });

  it('stores a run that measured nothing as failed, with the reason', async () => {
    const history = await History.open(path.join(workDir, 'history.duckdb'));
    const live = await startRecordedRun(parseScenario({ records: 50, warmup: '30s' }), { history, workDir });
    const record = await live.done;
    expect(record.status).toBe('failed');
    const stored = await history.getRun(live.id);
    expect(stored?.status).toBe('failed');
    expect(stored?.summary).toBeNull();
    expect(stored?.error).toMatch(/no measured sample/);
    expect(stored?.error).toBe(record.error);
  });
});
