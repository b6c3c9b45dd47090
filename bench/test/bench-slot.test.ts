// `npm run bench` shares the run slot with `kbench run`: each benchmark, spawned as npm runs it,
// refuses to start while a run holds the slot, and names that run.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunSlot } from '@kbench/history';
import { afterAll, beforeAll, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const BENCHES = [
  ['drivers', path.resolve(here, '../dist/drivers.js')],
  ['secured', path.resolve(here, '../dist/secured.js')],
  ['gate', path.resolve(here, '../dist/gate.js')],
  ['apache-kafka', path.resolve(here, '../dist/apache-kafka.js')],
  ['durability', path.resolve(here, '../dist/durability.js')],
  ['whole', path.resolve(here, '../dist/main.js')],
];

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'kbench-bench-slot-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

it.each(BENCHES)(
  'the %s benchmark refuses to start while a run holds the slot (exit 2)',
  async (_, script) => {
    const hold = new RunSlot(home).take({
      command: 'kbench run',
      name: 'a run in progress',
      stopsOnSigint: true,
    });
    try {
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [script as string, '--only', 'machine'],
          { env: { ...process.env, KBENCH_HOME: home, KBENCH_BENCH_RUNS: '1' }, timeout: 60_000 },
          (err, _stdout, stderr) => resolve({ code: err ? (err.code as number) : 0, stderr }),
        );
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('another run is going');
      expect(result.stderr).toContain('a run in progress');
    } finally {
      hold.release();
    }
  },
);
