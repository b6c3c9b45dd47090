// One run at a time on a machine (issue 14): the built `kbench`, spawned with no TTY and its own
// KBENCH_HOME, refuses a second run while one is going and names it; --concurrent runs it anyway,
// and both runs say so in the history and wherever their figures are printed.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, REPO, runKbench } from './helpers.js';

let home: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-cli-slot-'));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await rm(home, { recursive: true, force: true });
});

function kbench(args: string[]) {
  return runKbench(home, args);
}

/** `kbench <args>` left running, its output collected as it comes. */
function spawnKbench(args: string[]) {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: REPO,
    env: { ...process.env, KBENCH_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const watchers: (() => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const watch of watchers) watch();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  /** Resolves with the first match of `pattern` in stderr, once it has been written. */
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const watch = () => {
        const match = pattern.exec(stderr);
        if (match) resolve(match);
      };
      watchers.push(watch);
      void exited.then((code) => reject(new Error(`kbench exited ${code} first:\n${stderr}`)));
      watch();
    });
  return { child, exited, waitFor, stdout: () => stdout, stderr: () => stderr };
}

describe('kbench run while another run is going', () => {
  it('is refused naming the first run (exit 2); with --concurrent it runs and both runs record it', async () => {
    const first = spawnKbench(['run', 'scenarios/quickstart.yaml', '--set', 'duration=15s']);
    const firstId = (await first.waitFor(/run ([0-9a-f]{12}): quickstart/))[1] as string;

    const refused = await kbench(['run', 'scenarios/quickstart.yaml']);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr.trim()).toMatch(
      new RegExp(
        `^another run is going: ${firstId} quickstart \\(kbench run, pid ${first.child.pid}, since \\d\\d:\\d\\d:\\d\\d\\); wait for it, stop it, or pass --concurrent to run anyway$`,
      ),
    );

    const beside = await kbench([
      'run',
      'scenarios/quickstart.yaml',
      '--concurrent',
      '--set',
      'duration=3s',
      '--set',
      'warmup=1s',
    ]);
    expect(beside.code, beside.stderr).toBe(0);
    const besideId = /run ([0-9a-f]{12}): quickstart/.exec(beside.stderr)?.[1] as string;
    expect(beside.stderr).toContain(
      `warning: this run ran at the same time as run ${firstId} on this machine`,
    );
    // The summary after the run says it.
    expect(beside.stdout).toContain(`warning    ran at the same time as run ${firstId} on this machine`);

    expect(await first.exited, first.stderr()).toBe(0);
    // The first run learnt of the second while it ran: its summary says so too.
    expect(first.stdout()).toContain(`warning    ran at the same time as run ${besideId} on this machine`);

    for (const [id, other] of [
      [firstId, besideId],
      [besideId, firstId],
    ] as const) {
      const json = await kbench(['show', id, '--json']);
      expect(JSON.parse(json.stdout).concurrentWith).toEqual([other]);
      const text = await kbench(['show', id]);
      expect(text.stdout).toContain(
        `warning    ran at the same time as run ${other} on this machine: they shared its cores, memory and disk, so these figures are not those of a run alone`,
      );
    }

    // The refused run stored nothing; the list marks both runs.
    const list = await kbench(['list']);
    expect(list.stdout.match(/completed\*/g)).toHaveLength(2);
    expect(list.stdout).toContain('* ran at the same time as another run on this machine');
    const listed = JSON.parse((await kbench(['list', '--json'])).stdout) as { id: string }[];
    expect(listed.map((r) => r.id).sort()).toEqual([firstId, besideId].sort());

    const compared = await kbench(['compare', firstId, besideId]);
    expect(compared.stdout).toContain(`warning: ${firstId} ran at the same time as run ${besideId}`);
    expect(compared.stdout).toContain(`warning: ${besideId} ran at the same time as run ${firstId}`);

    // Exports: the HTML report warns, the CSV names the other run.
    const report = path.join(home, 'report.html');
    expect((await kbench(['compare', firstId, besideId, '--report', report])).code).toBe(0);
    expect(await readFile(report, 'utf8')).toContain(
      `Warning: ${firstId} ran at the same time as run ${besideId} on this machine`,
    );
    const markdown = path.join(home, 'report.md');
    expect((await kbench(['compare', firstId, besideId, '--report', markdown])).code).toBe(0);
    expect(await readFile(markdown, 'utf8')).toContain(
      `> **Warning: ${besideId} ran at the same time as run ${firstId} on this machine`,
    );
    expect((await kbench(['export', firstId, '--csv', '--out', home])).code).toBe(0);
    const csv = await readFile(path.join(home, `kbench-${firstId}-summary.csv`), 'utf8');
    expect(csv.split('\r\n')[0]).toMatch(/,concurrent_with,machine_cpu_busy,disk_written_bytes$/);
    expect(csv.split('\r\n')[1]).toMatch(new RegExp(`,${besideId},[\\d.]+,\\d*$`));

    // Both runs have ended: the slot is free, and a run alone says nothing of the kind.
    const alone = await kbench([
      'run',
      'scenarios/quickstart.yaml',
      '--set',
      'duration=2s',
      '--set',
      'warmup=1s',
    ]);
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).not.toContain('ran at the same time');
  });

  it('sweep, rerun and reproduce share the slot: refused while it is held, run beside it with --concurrent', async () => {
    const holder = spawnKbench(['run', 'scenarios/quickstart.yaml', '--set', 'duration=120s']);
    const holderId = (await holder.waitFor(/run ([0-9a-f]{12}): quickstart/))[1] as string;
    const busy = `another run is going: ${holderId} quickstart (kbench run, pid ${holder.child.pid}, since`;

    const sweep = path.join(home, 'tiny-sweep.yaml');
    await writeFile(
      sweep,
      'name: tiny sweep\nduration: 2s\nwarmup: 1s\nsweep: { knob: producers.messageSize, values: [10, 20] }\n',
    );
    const folder = path.join(home, 'tiny-write-up');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'only.yaml'), 'name: only\nduration: 2s\nwarmup: 1s\n');
    await writeFile(
      path.join(folder, 'published.yaml'),
      'title: One short run\nurl: https://example.com/one\nsetup: one laptop\nexperiments:\n  - scenario: only.yaml\n    title: The only one\n    published: { throughput: "1 rec/s" }\n',
    );
    const reports = path.join(home, 'reports');

    for (const args of [
      ['sweep', sweep],
      ['reproduce', folder, '--quick', '--out', reports],
    ]) {
      const refused = await kbench(args);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(busy);
    }

    const swept = await kbench(['sweep', sweep, '--concurrent', '--json']);
    expect(swept.code, swept.stderr).toBe(0);
    const points = JSON.parse(swept.stdout) as { id: string; concurrentWith?: string[] }[];
    expect(points.map((p) => p.concurrentWith)).toEqual([[holderId], [holderId]]);

    const refusedRerun = await kbench(['rerun', points[0]?.id as string]);
    expect(refusedRerun.code).toBe(2);
    expect(refusedRerun.stderr).toContain(busy);
    const rerun = await kbench(['rerun', points[0]?.id as string, '--concurrent', '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout).concurrentWith).toEqual([holderId]);

    const reproduced = await kbench(['reproduce', folder, '--quick', '--out', reports, '--concurrent']);
    expect(reproduced.code, reproduced.stderr).toBe(0);
    expect(await readFile(path.join(reports, 'tiny-write-up.md'), 'utf8')).toContain(
      `ran at the same time as run ${holderId} on this machine`,
    );

    // The holder learnt of each of them.
    holder.child.kill('SIGINT');
    expect(await holder.exited).toBe(0);
    const held = JSON.parse((await kbench(['show', holderId, '--json'])).stdout) as {
      concurrentWith: string[];
    };
    expect(held.concurrentWith).toHaveLength(4);
    expect(held.concurrentWith).toEqual(expect.arrayContaining([points[0]?.id, points[1]?.id]));
  });
});
