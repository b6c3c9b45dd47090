// producers.messageSize as a distribution or a payload file, and bytes on the wire for kafkajs:
// sampled sizes against their distribution, the scenario check, and real runs on the bundled broker.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_MESSAGE_BYTES, parseScenario, type ScenarioInput } from '@kbench/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioRun, unsupportedIssues } from '../src/index.js';
import { PayloadSource, readPayloadFile, sentAtMicros, sizeSampler } from '../src/payload.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'kbench-message-size-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

function draw(sample: () => number, n: number): { mean: number; stddev: number; min: number; max: number } {
  const xs = Array.from({ length: n }, sample);
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const stddev = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / n);
  return { mean, stddev, min: Math.min(...xs), max: Math.max(...xs) };
}

describe('message size sampling', () => {
  it('draws a normal distribution with the given mean and stddev, clamped to min and max', () => {
    const s = draw(sizeSampler({ distribution: 'normal', mean: 1000, stddev: 100 }, 7), 50_000);
    expect(Math.abs(s.mean - 1000)).toBeLessThan(5);
    expect(Math.abs(s.stddev - 100)).toBeLessThan(5);
    const clamped = draw(
      sizeSampler({ distribution: 'normal', mean: 100, stddev: 50, min: 80, max: 120 }, 7),
      10_000,
    );
    expect(clamped.min).toBe(80);
    expect(clamped.max).toBe(120);
  });

  it('draws an exponential distribution with the given mean, never below 1 byte', () => {
    const s = draw(sizeSampler({ distribution: 'exponential', mean: 500 }, 3), 50_000);
    expect(Math.abs(s.mean - 500) / 500).toBeLessThan(0.03);
    // An exponential's standard deviation equals its mean.
    expect(Math.abs(s.stddev - 500) / 500).toBeLessThan(0.05);
    expect(s.min).toBeGreaterThanOrEqual(1);
  });

  it('draws a uniform range with mean (min + max) / 2', () => {
    const s = draw(sizeSampler({ min: 10, max: 30 }, 1), 50_000);
    expect(Math.abs(s.mean - 20)).toBeLessThan(0.3);
    expect([s.min, s.max]).toEqual([10, 30]);
  });

  it('repeats the same sizes for the same seed, and others for another seed', () => {
    const size = { distribution: 'normal', mean: 1000, stddev: 300 } as const;
    const a = sizeSampler(size, 42);
    const b = sizeSampler(size, 42);
    const c = sizeSampler(size, 43);
    const first = Array.from({ length: 100 }, a);
    expect(Array.from({ length: 100 }, b)).toEqual(first);
    expect(Array.from({ length: 100 }, c)).not.toEqual(first);
  });

  it('sends a payload file whole as every value, stamped with the send time', async () => {
    const file = path.join(workDir, 'payload.data');
    await writeFile(file, Buffer.alloc(300, 'x'));
    const s = parseScenario({ producers: { messageSize: { payloadFile: file } } });
    const source = new PayloadSource(s.producers);
    const value = source.value(123_456);
    expect(value.length).toBe(300);
    expect(sentAtMicros(value)).toBe(123_456);
    expect(value.subarray(8).toString()).toBe('x'.repeat(292));
    expect(source.meanSize).toBe(300);
  });
});

describe('the scenario check', () => {
  it('accepts distributions and payload files for the native driver', async () => {
    const file = path.join(workDir, 'payload-native.data');
    await writeFile(file, 'abc');
    const normal = parseScenario({
      driver: 'native',
      producers: { messageSize: { distribution: 'normal', mean: 100, stddev: 10 } },
    });
    expect(unsupportedIssues(normal)).toEqual([]);
    const payload = parseScenario({ driver: 'native', producers: { messageSize: { payloadFile: file } } });
    expect(unsupportedIssues(payload)).toEqual([]);
    expect(
      unsupportedIssues(parseScenario({ driver: 'native', producers: { messageSize: { min: 1, max: 9 } } })),
    ).toEqual([]);
  });

  it('names producers.messageSize.payloadFile when the file cannot be read', () => {
    const missing = path.join(workDir, 'no-such-file');
    const issues = unsupportedIssues(parseScenario({ producers: { messageSize: { payloadFile: missing } } }));
    expect(issues).toEqual([
      { path: 'producers.messageSize.payloadFile', message: `cannot read ${missing}: no such file` },
    ]);
  });
});

describe('a payload file is a regular file of at most 16 MiB, checked before it is read', () => {
  const FIELD = 'producers.messageSize.payloadFile';
  const RULE =
    'a payload file must be a regular file of at most the largest message (16777216 bytes, 16 MiB)';
  const issuesFor = (file: string) =>
    unsupportedIssues(parseScenario({ producers: { messageSize: { payloadFile: file } } }));

  it('refuses /dev/zero as a character device', () => {
    expect(issuesFor('/dev/zero')).toEqual([
      { path: FIELD, message: `/dev/zero is a character device; ${RULE}` },
    ]);
  });

  it('refuses a FIFO (which has no writer) without blocking on it', async () => {
    const fifo = path.join(workDir, 'payload.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(issuesFor(fifo)).toEqual([{ path: FIELD, message: `${fifo} is a FIFO; ${RULE}` }]);
  });

  it('refuses a directory', async () => {
    const dir = path.join(workDir, 'payload.dir');
    await mkdir(dir);
    expect(issuesFor(dir)).toEqual([{ path: FIELD, message: `${dir} is a directory; ${RULE}` }]);
  });

  it('refuses a sparse 17 MiB file by its size, naming the field and the limit', async () => {
    const file = path.join(workDir, 'payload-17mib.data');
    await writeFile(file, '');
    await truncate(file, 17 * 1024 * 1024);
    expect(() => readPayloadFile(file)).toThrow(
      `${FIELD}: ${file} is 17825792 bytes, above the largest message (16777216 bytes, 16 MiB)`,
    );
  });

  it('reads a file of exactly 16 MiB whole', async () => {
    const file = path.join(workDir, 'payload-16mib.data');
    await writeFile(file, Buffer.alloc(MAX_MESSAGE_BYTES, 'z'));
    const content = readPayloadFile(file);
    expect(content.length).toBe(MAX_MESSAGE_BYTES);
    expect(content.subarray(-3).toString()).toBe('zzz');
  });

  it('a producer given /dev/zero fails naming the field instead of reading it', () => {
    const s = parseScenario({ producers: { messageSize: { payloadFile: '/dev/zero' } } });
    expect(() => new PayloadSource(s.producers)).toThrow(`${FIELD}: /dev/zero is a character device`);
  });
});

describe('kafkajs runs against the bundled broker', () => {
  const run = (input: ScenarioInput) =>
    new ScenarioRun(parseScenario(input), {
      runId: Math.random().toString(16).slice(2, 10),
      workDir,
    }).execute();

  it('reports bytes on the wire above value bytes, with sizes drawn from an exponential distribution', async () => {
    const outcome = await run({
      records: 20_000,
      topics: { partitions: 2 },
      producers: { count: 1, messageSize: { distribution: 'exponential', mean: 200, max: 4000 } },
    });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const summary = outcome.summary!;
    expect(summary.produced.records).toBe(20_000);
    const bytes = outcome.samples.reduce((n, s) => n + s.producedBytes, 0);
    expect(Math.abs(bytes / 20_000 - 200) / 200).toBeLessThan(0.1);
    expect(summary.produced.wireMbPerSec).not.toBeNull();
    expect(summary.produced.wireMbPerSec).toBeGreaterThan(summary.produced.mbPerSec);
  });

  it('sends a payload file as every value', async () => {
    const file = path.join(workDir, 'payload-run.data');
    await writeFile(file, Buffer.alloc(1024, 'p'));
    const outcome = await run({ records: 2000, producers: { count: 1, messageSize: { payloadFile: file } } });
    expect(outcome.status, String(outcome.error)).toBe('completed');
    const bytes = outcome.samples.reduce((n, s) => n + s.producedBytes, 0);
    expect(bytes).toBe(2000 * 1024);
  });
});
