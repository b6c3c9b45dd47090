import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runKbench } from './helpers.js';

const OMB = path.resolve(REPO, 'packages/schema/test/fixtures/omb');

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-reproduce-test-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

function kbench(args: string[]) {
  return runKbench(home, args);
}

const TINY = {
  'one-producer.yaml':
    'name: tiny one producer\ndriver: native\nproducers: { count: 1 }\nduration: 3s\nwarmup: 1s\n',
  'size-sweep.yaml':
    'name: tiny size sweep\ndriver: native\nproducers: { count: 1 }\nduration: 3s\nwarmup: 1s\nsweep: { knob: producers.messageSize, values: [100, 10000] }\n',
  'replicated.yaml':
    'name: tiny replicated\ncluster: { nodes: 3 }\ntopics: { replicationFactor: 3 }\nduration: 3s\n',
  'published.yaml': `title: A tiny write-up
experiments:
  - scenario: one-producer.yaml
    title: one producer
    published: { records/s: '1,000' }
  - scenario: size-sweep.yaml
    title: size sweep
    published: { MB/s: rises with size }
    checks:
      - expect: { metric: produced.mbPerSec, across: producers.messageSize, direction: increasing }
        says: MB/s rises with message size
  - scenario: replicated.yaml
    title: replicated
    published: { records/s: '500' }
    checks:
      - compare: { a: one-producer.yaml, b: replicated.yaml, metric: produced.recordsPerSec, expect: higher }
        says: no replication is faster
`,
};

describe('kbench reproduce', () => {
  it('runs a folder --quick, a 3-node experiment included, and writes the report with SVGs and directions', async () => {
    const folder = path.join(home, 'tiny-2024');
    await mkdir(folder);
    for (const [name, text] of Object.entries(TINY)) await writeFile(path.join(folder, name), text);
    const out = path.join(home, 'report');
    const r = await kbench(['reproduce', folder, '--quick', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(path.join(out, 'tiny-2024.md'));
    const report = await readFile(path.join(out, 'tiny-2024.md'), 'utf8');
    expect(report).toContain('# Reproduction: A tiny write-up');
    expect(report).toContain('**Quick run**');
    expect(report).toMatch(/## Machine\n\n- \d+ cores/);
    expect(report).toContain('| records/s | 1,000 |');
    expect(report).toMatch(/- Direction: MB\/s rises with message size: \*\*(matches|does not match)\*\*/);
    expect(report).toMatch(/- Direction: no replication is faster: \*\*(matches|does not match)\*\*/);
    const svgs = await readdir(path.join(out, 'tiny-2024'));
    expect(svgs).toContain('one-producer-throughput.svg');
    expect(svgs.filter((f) => f.startsWith('size-sweep-')).length).toBeGreaterThan(0);
    for (const svg of svgs) expect(svg).toMatch(/\.svg$/);
    expect(await readFile(path.join(out, 'tiny-2024', 'one-producer-throughput.svg'), 'utf8')).toContain(
      '<svg',
    );
    for (const [name] of report.matchAll(/\]\((tiny-2024\/[^)]+\.svg)\)/g)) expect(name).toBeTruthy();

    const list = await kbench(['list', '--json']);
    expect(JSON.parse(list.stdout).length).toBe(4);
  });

  it('exits 2 for a folder without published.yaml', async () => {
    const r = await kbench(['reproduce', path.join(home, 'nowhere')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a folder with a published.yaml');
  });
});

describe('kbench import omb and export --omb', () => {
  it('maps payloadFile to the file beside the workload, and runs it with kafkajs', async () => {
    const file = path.join(home, 'omb-payload.yaml');
    const imported = await kbench([
      'import',
      'omb',
      path.join(OMB, '1-topic-16-partitions-1kb.yaml'),
      '--out',
      file,
    ]);
    expect(imported.code).toBe(0);
    expect(imported.stderr).not.toContain('payloadFile');
    const yaml = await readFile(file, 'utf8');
    expect(yaml).toContain(`payloadFile: ${path.join(OMB, 'payload/payload-1Kb.data')}`);
    expect(yaml).toContain('driver: kafkajs');
    const run = await kbench([
      'run',
      file,
      '--json',
      '--set',
      'duration=2s',
      '--set',
      'warmup=0s',
      '--set',
      'producers.rate=500',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record.summary.produced.records).toBeGreaterThan(0);
    expect(record.summary.produced.wireMbPerSec).toBeGreaterThan(record.summary.produced.mbPerSec);
  });

  it('imports an OMB workload and driver, runs it shortened, and exports OMB result JSON', async () => {
    const file = path.join(home, 'omb.yaml');
    const imported = await kbench([
      'import',
      'omb',
      path.join(OMB, '1-topic-16-partitions-1kb.yaml'),
      path.join(OMB, 'kafka-throughput.yaml'),
      '--out',
      file,
    ]);
    expect(imported.code).toBe(0);
    // lz4 (from the driver file) keeps the native driver, which does not send payload files.
    expect(imported.stderr).toContain('not mapped: payloadFile: payload files need driver kafkajs');
    const yaml = await readFile(file, 'utf8');
    expect(yaml).toContain('#   payloadFile:');
    expect(yaml).toContain('partitions: 16');

    // The driver file asks for 3 replicas, which needs nodes the engine does not have yet.
    const run = await kbench([
      'run',
      file,
      '--json',
      '--set',
      'cluster.nodes=1',
      '--set',
      'topics.replicationFactor=1',
      '--set',
      'topics.minInsyncReplicas=1',
      '--set',
      'duration=3s',
      '--set',
      'warmup=1s',
      '--set',
      'producers.rate=2000',
    ]);
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    const out = path.join(home, 'omb-out');
    const exported = await kbench(['export', record.id, '--omb', '--out', out]);
    expect(exported.code).toBe(0);
    const result = JSON.parse(await readFile(path.join(out, `kbench-${record.id}-omb.json`), 'utf8'));
    expect(result).toMatchObject({
      messageSize: 1024,
      topics: 1,
      partitions: 16,
      producersPerTopic: 1,
      consumersPerTopic: 1,
    });
    expect(result.publishRate.length).toBeGreaterThan(0);
    expect(result.aggregatedPublishLatency99pct).toBeGreaterThan(0);
    expect(result.aggregatedEndToEndLatency50pct).toBeGreaterThan(0);
  });
});
