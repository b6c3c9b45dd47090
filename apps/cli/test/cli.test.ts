// Runs the built `kbench` command as a user would, against the real broker and a real history file.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runKbench } from './helpers.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-test-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

function kbench(args: string[]) {
  return runKbench(home, args);
}

describe('the kbench bin', () => {
  it('is linked by npm and runs', async () => {
    const r = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(path.join(REPO, 'node_modules/.bin/kbench'), ['help'], { cwd: REPO }, (err, stdout) =>
        resolve({ code: err ? 1 : 0, stdout }),
      );
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('kbench run <scenario>');
  });
});

describe('help for one command', () => {
  it("`kbench <command> --help` and `kbench help <command>` print that command's usage and exit 0", async () => {
    for (const args of [
      ['export', '--help'],
      ['help', 'export'],
      ['export', '1234', '-h'],
    ]) {
      const r = await kbench(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toContain(
        'kbench export <run-id>... --csv|--svg|--png|--json|--omb|--hlog|--histograms-json [--out DIR]',
      );
      expect(r.stdout).not.toContain('kbench run <scenario>');
      expect(r.stdout).toContain('Exit codes:');
    }
    const run = await kbench(['run', '--help']);
    expect(run.stdout).toContain('Options of run:');
    expect(run.stdout).toContain('--max-rate N');
    const broker = await kbench(['broker', '--help']);
    expect(broker.stdout).toContain('[--fsync none|batch|interval:<ms>] [--processes]');
  });
});

describe('kbench usage errors exit 2 with a message', () => {
  it('unknown command', async () => {
    const r = await kbench(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });

  it('unknown flag', async () => {
    const r = await kbench(['run', 'scenarios/quickstart.yaml', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'--bogus'");
  });

  it('invalid scenario names the field and the allowed values', async () => {
    const r = await kbench(['run', 'scenarios/quickstart.yaml', '--set', 'producers.acks=2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('producers.acks: must be one of 0, 1, all (got 2)');
  });

  it('a knob under an unknown section, and a section set to a number, name what is wrong', async () => {
    const unknown = await kbench(['run', 'scenarios/quickstart.yaml', '--set', 'producer.acks=1']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown knob "producer.acks"; known here: name, description,');
    const wrongType = await kbench(['run', 'scenarios/quickstart.yaml', '--set', 'producers=1']);
    expect(wrongType.code).toBe(2);
    expect(wrongType.stderr).toContain('producers: must be an object (got 1)');
  });

  it('a knob the engine cannot run yet', async () => {
    const r = await kbench(['run', 'scenarios/quickstart.yaml', '--set', 'topics.replicationFactor=3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('topics.replicationFactor:');
  });

  it('a payload file that is a device (/dev/zero) names the field and the limit, unread', async () => {
    const r = await kbench([
      'run',
      'scenarios/quickstart.yaml',
      '--set',
      'producers.messageSize={payloadFile: /dev/zero}',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'producers.messageSize.payloadFile: /dev/zero is a character device; a payload file must be a regular file of at most the largest message (16777216 bytes, 16 MiB)',
    );
  });

  it('missing scenario file', async () => {
    const r = await kbench(['run', path.join(home, 'missing.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no such file');
  });

  it('unknown run id', async () => {
    const r = await kbench(['show', 'ffffffff']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no run "ffffffff"');
  });

  it('sweep of a scenario without a sweep', async () => {
    const r = await kbench(['sweep', 'scenarios/quickstart.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has no sweep');
  });

  it('bad --limit', async () => {
    const r = await kbench(['list', '--limit', 'lots']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--limit must be a whole number');
  });
});

describe('kbench run, list and show', () => {
  it('runs a scenario, stores it, and lists and shows it', async () => {
    const file = path.join(home, 'tiny.yaml');
    await writeFile(
      file,
      'name: tiny\nduration: 3s\nwarmup: 1s\nproducers: { count: 1 }\nconsumers: { count: 1 }\n',
    );
    const run = await kbench(['run', file, '--json', '--set', 'topics.partitions=2']);
    expect(run.stderr).toContain('run ');
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record.status).toBe('completed');
    expect(record.scenario.topics.partitions).toBe(2);
    expect(record.summary.produced.recordsPerSec).toBeGreaterThan(0);
    expect(record.environment.target).toBe('bundled');

    const list = await kbench(['list', '--json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).map((r: { id: string }) => r.id)).toContain(record.id);

    const show = await kbench(['show', record.id.slice(0, 6)]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`run ${record.id}  completed`);
    expect(show.stdout).toMatch(/produced\s+[\d,]+\s+[\d,]+/);
    // The whole machine over the measured phase, and the disk under the bundled broker's data.
    expect(show.stdout).toMatch(
      /\nthis machine: \d+% of its \d+ cores busy( \(\d+\.\d\d cores of it outside kbench\))?; (the disk under the broker's data \(\w+\) wrote [\d,]+ MB|no disk figure \(the broker's data is elsewhere, or on no single disk of this machine\))/,
    );
    expect(record.summary.machine.cores).toBe(os.cpus().length);

    const rerun = await kbench(['rerun', record.id, '--json']);
    expect(rerun.code).toBe(0);
    const again = JSON.parse(rerun.stdout);
    expect(again.id).not.toBe(record.id);
    expect(again.status).toBe('completed');
    expect(again.scenario).toEqual(record.scenario);
  });

  it('runs each value of a sweep', async () => {
    const file = path.join(home, 'sweep.yaml');
    await writeFile(
      file,
      'name: sizes\nrecords: 500\nsweep: { knob: producers.messageSize, values: [10, 1000] }\n',
    );
    const r = await kbench(['sweep', file, '--json']);
    expect(r.code).toBe(0);
    const runs = JSON.parse(r.stdout) as {
      scenario: { producers: { messageSize: number } };
      status: string;
    }[];
    expect(runs.map((x) => x.scenario.producers.messageSize)).toEqual([10, 1000]);
    expect(runs.every((x) => x.status === 'completed')).toBe(true);
  });

  it('compares runs and points out the settings that differ', async () => {
    const file = path.join(home, 'sweep2.yaml');
    await writeFile(file, 'name: acks\nrecords: 300\nsweep: { knob: producers.acks, values: [1, all] }\n');
    const runs = JSON.parse((await kbench(['sweep', file, '--json'])).stdout) as { id: string }[];
    const ids = runs.map((r) => r.id);
    const text = await kbench(['compare', ...ids]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('produced rec/s');
    expect(text.stdout).toMatch(/producers\.acks\s+1\s+all/);
    const json = JSON.parse((await kbench(['compare', ...ids, '--json'])).stdout);
    expect(json.differences).toEqual([{ path: 'producers.acks', values: ['1', 'all'] }]);
    expect((await kbench(['compare', ids[0] as string])).code).toBe(2);
  });

  it('exports CSV, SVG, PNG and JSON files with real content', async () => {
    const list = JSON.parse((await kbench(['list', '--json'])).stdout) as { id: string }[];
    const id = list[0]?.id as string;
    const out = path.join(home, 'export');
    const r = await kbench(['export', id, '--csv', '--svg', '--png', '--json', '--out', out]);
    expect(r.code).toBe(0);
    const files = r.stdout.trim().split('\n');
    const csv = await readFile(path.join(out, `kbench-${id}-samples.csv`), 'utf8');
    expect(csv.split('\r\n')[0]).toContain('produced_records');
    expect(csv.split('\r\n').length).toBeGreaterThan(2);
    const svg = await readFile(path.join(out, `kbench-${id}-throughput.svg`), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    const png = await readFile(path.join(out, `kbench-${id}-throughput.png`));
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.length).toBeGreaterThan(5000);
    const json = JSON.parse(await readFile(path.join(out, `kbench-${id}.json`), 'utf8'));
    expect(json.id).toBe(id);
    expect(json.samples.length).toBeGreaterThan(0);
    expect(files.length).toBeGreaterThanOrEqual(11);
    expect((await kbench(['export', id])).code).toBe(2);
  });
});
