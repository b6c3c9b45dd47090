// `kbench compare` on a sweep's runs, as a user types it: spawned, no TTY, its own KBENCH_HOME.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKbench } from './helpers.js';

// Long enough that the part of each name that differs (the sweep value) comes after 40 characters.
const NAME = 'a scenario whose name is long enough to be cut by a narrow column of a table';
const SIZES = [111, 222, 333, 444, 555];

let home: string;
let ids: string[];
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-compare-test-'));
  const file = path.join(home, 'sizes.yaml');
  await writeFile(
    file,
    `name: ${NAME}\nrecords: 300\nsweep: { knob: producers.messageSize, values: [${SIZES.join(', ')}] }\n`,
  );
  const sweep = await runKbench(home, ['sweep', file, '--json'], 300_000);
  expect(sweep.code).toBe(0);
  ids = (JSON.parse(sweep.stdout) as { id: string }[]).map((r) => r.id);
  expect(ids).toHaveLength(SIZES.length);
}, 360_000);
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kbench compare', () => {
  it('fits five runs with long names in 120 columns and keeps the part of each name that differs', async () => {
    const r = await runKbench(home, ['compare', ...ids]);
    expect(r.code).toBe(0);
    const tooWide = r.stdout.split('\n').filter((line) => line.length > 120);
    expect(tooWide).toEqual([]);
    for (const size of SIZES) expect(r.stdout).toContain(`messageSize=${size}]`);
    for (const id of ids) expect(r.stdout).toContain(id);
  });

  it('--baseline <id> prints each figure of the other runs as a change against that run', async () => {
    const baseline = ids[0] as string;
    const r = await runKbench(home, ['compare', ...ids, '--baseline', baseline.slice(0, 8)]);
    expect(r.code).toBe(0);
    // A table too wide for the terminal goes on in a second block, so gather the row from each.
    const produced = r.stdout
      .split('\n')
      .filter((line) => line.startsWith('produced rec/s'))
      .join(' ');
    // The baseline's own figure stands alone; each of the four others carries a signed percentage.
    expect(produced.match(/[+-]\d+(\.\d+)?%/g)).toHaveLength(ids.length - 1);
    expect(r.stdout).toMatch(new RegExp(`baseline\\b.*${baseline}|${baseline}.*\\bbaseline`));
  });

  it('--svg DIR and --png DIR write the comparison charts into each folder', async () => {
    const svg = path.join(home, 'svg');
    const png = path.join(home, 'png');
    const r = await runKbench(home, [
      'compare',
      ids[0] as string,
      ids[1] as string,
      '--svg',
      svg,
      '--png',
      png,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`wrote \\d+ SVG charts to ${svg}\n`));
    expect(r.stderr).toMatch(new RegExp(`wrote \\d+ PNG charts to ${png}\n`));
    expect(await readFile(path.join(svg, 'kbench-compare-publish-percentiles.svg'), 'utf8')).toMatch(/^<svg/);
    const image = await readFile(path.join(png, 'kbench-compare-publish-percentiles.png'));
    expect(image.subarray(1, 4).toString()).toBe('PNG');
  });

  it('--help lists --baseline', async () => {
    const r = await runKbench(home, ['compare', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--baseline ID\s+one of the runs compared/);
  });

  it('--baseline naming a run that is not compared is a usage error', async () => {
    const r = await runKbench(home, [
      'compare',
      ids[1] as string,
      ids[2] as string,
      '--baseline',
      ids[0] as string,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not one of the runs compared');
  });
});
