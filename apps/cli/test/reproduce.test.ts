import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, REPO, runKbench } from './helpers.js';

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

describe('kbench reproduce', () => {
  it('exits 2 for a folder without published.yaml', async () => {
    const r = await kbench(['reproduce', path.join(home, 'nowhere')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a folder with a published.yaml');
  });
});

describe('kbench reproduce --quick, one scenario', () => {
  let result: Awaited<ReturnType<typeof kbench>>;
  let folder: string;
  beforeAll(async () => {
    folder = path.join(home, 'scenarios', 'tiny-sizes');
    await mkdir(folder, { recursive: true });
    await writeFile(
      path.join(folder, 'sizes.yaml'),
      'name: tiny sizes\ndescription: two message sizes\ndriver: native\nduration: 2s\nproducers: { count: 1 }\nsweep: { knob: producers.messageSize, values: [10, 1000] }\n',
    );
    await writeFile(
      path.join(folder, 'published.yaml'),
      `title: Tiny sizes\nexperiments:\n  - scenario: sizes.yaml\n    title: Message size sweep\n    published: { "10 B": "1,000 rec/s" }\n    checks:\n      - expect: { metric: produced.mbPerSec, across: producers.messageSize, direction: increasing }\n        says: MB/s rises with the message size\n      - expect: { metric: produced.errors, across: producers.messageSize, direction: peak }\n        says: errors peak in the middle\n`,
    );
    result = await kbench(['reproduce', folder, '--quick', '--out', path.join(home, 'reports')]);
  }, 120_000);

  it('ends with a verdict summary after the report path, each verdict marked indicative', () => {
    expect(result.code, result.stderr).toBe(0);
    const tail = result.stdout.slice(result.stdout.indexOf('report: '));
    expect(tail).toContain(
      'verdicts of tiny-sizes (quick run: seconds of measurement, so each is indicative only):',
    );
    expect(tail).toContain('  indicative: matches  MB/s rises with the message size (Message size sweep)');
    expect(tail).toMatch(
      / {2}indicative: does not match {2}errors peak in the middle \(Message size sweep\)/,
    );
    expect(tail).toContain('1 indicative match, 1 indicative mismatch, 0 not checked');
  });

  it('writes each quick verdict in the report as indicative', async () => {
    const report = await readFile(path.join(home, 'reports', 'tiny-sizes.md'), 'utf8');
    expect(report).toContain('- Direction: MB/s rises with the message size: **indicative: matches**');
    expect(report).not.toMatch(/\*\*(matches|does not match)\*\*/);
  });

  it('tags its runs as a quick reproduction of the folder, as the web app finds them', async () => {
    const list = await kbench(['list', '--json']);
    const runs = JSON.parse(list.stdout) as { name: string; tags: string[] }[];
    const own = runs.filter((r) => r.name.startsWith('tiny sizes'));
    expect(own).toHaveLength(2);
    for (const run of own)
      expect(run.tags).toEqual([expect.stringMatching(/^reproduce:user\/tiny-sizes:\d{8}-\d{6}-quick$/)]);
  });
});

describe('kbench reproduce, stopped with Ctrl-C', () => {
  it('stops the run under way, runs no more, and writes the partial report away from docs/', async () => {
    const folder = path.join(home, 'stop-me');
    await mkdir(folder, { recursive: true });
    const scenario = (name: string) =>
      `name: ${name}\ndescription: a long steady producer\nduration: 60s\nproducers: { count: 1, rate: 1000 }\n`;
    await writeFile(path.join(folder, 'first.yaml'), scenario('first'));
    await writeFile(path.join(folder, 'second.yaml'), scenario('second'));
    await writeFile(
      path.join(folder, 'published.yaml'),
      `title: Two long runs\nurl: https://example.com/two\nsetup: one laptop\nexperiments:\n  - scenario: first.yaml\n    title: The first\n    published: { throughput: "1,000 rec/s" }\n  - scenario: second.yaml\n    title: The second\n    published: { throughput: "1,000 rec/s" }\n`,
    );
    const child = spawn(process.execPath, [MAIN, 'reproduce', folder], {
      cwd: REPO,
      env: { ...process.env, KBENCH_HOME: home },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    // Ctrl-C once the first run has measured a sample.
    child.stderr.on('data', (d: Buffer) => {
      const before = stderr;
      stderr += d.toString();
      if (!/rec\/s/.test(before) && /rec\/s/.test(stderr)) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(130);
    expect(stderr).toContain('stopping');
    const report = /^report: (.+)$/m.exec(stdout)?.[1] as string;
    expect(report).toBeDefined();
    expect(report.startsWith(path.join(REPO, 'docs'))).toBe(false);
    const text = await readFile(report, 'utf8');
    expect(text).toContain('Not run: the reproduction was stopped (Ctrl-C) before this experiment ran');
    expect(text).toContain('stopped');
    const list = await kbench(['list', '--json']);
    const runs = JSON.parse(list.stdout) as { name: string; status: string }[];
    expect(runs.filter((r) => r.name === 'second')).toEqual([]);
    expect(runs.find((r) => r.name === 'first')?.status).toBe('stopped');
  }, 120_000);
});

describe('kbench import omb and export --omb', () => {
  it.each([
    ['1-topic-16-partitions-1kb.yaml', '500'],
    ['1-topic-100-partitions-1kb-4-producers-500k-rate.yaml', '500000'],
  ])(
    'imports %s with its payload file beside it, and runs it shortened at %s msg/s',
    async (workload, rate) => {
      const file = path.join(home, `omb-${workload}`);
      const imported = await kbench(['import', 'omb', path.join(OMB, workload), '--out', file]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stderr).not.toContain('payloadFile');
      const yaml = await readFile(file, 'utf8');
      expect(yaml).toContain(`payloadFile: ${path.join(OMB, 'payload/payload-1Kb.data')}`);
      expect(yaml).toContain('driver: native');
      expect(yaml).toContain(`rate: ${rate}`);
      const run = await kbench(['run', file, '--json', '--set', 'duration=3s', '--set', 'warmup=1s']);
      expect(run.code, run.stderr).toBe(0);
      const record = JSON.parse(run.stdout);
      expect(record.status).toBe('completed');
      const produced = record.summary.produced;
      expect(produced.records).toBeGreaterThan(0);
      expect(record.summary.consumed.records).toBeGreaterThan(0);
      // Every value is the 1,024-byte payload file.
      expect((produced.mbPerSec * 1024 ** 2) / produced.recordsPerSec).toBeCloseTo(1024, 0);
      expect(produced.wireMbPerSec).toBeGreaterThan(produced.mbPerSec);
    },
  );

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
    const yaml = await readFile(file, 'utf8');
    expect(yaml).toContain('compression: lz4');
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
