// npm run bench --only: a section no part writes is a usage error (exit 2) naming the sections there are,
// before any part starts.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

it('npm run bench -- --only with an unknown section exits 2 and lists the sections', async () => {
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [path.resolve(here, '../dist/main.js'), '--only', 'durability,nonsense'],
      { timeout: 60_000 },
      (err, _stdout, stderr) => resolve({ code: err ? (err.code as number) : 0, stderr }),
    );
  });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('--only: unknown section "nonsense"');
  expect(result.stderr).toContain('machine, throughput, replication, topics, durability, drivers, secured');
});
