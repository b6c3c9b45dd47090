// What several specs do first: store a short real run, started through the API as the Run button does,
// or start a second broker with `kbench broker`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, type Page } from '@playwright/test';

/** Starts a run of this scenario object and waits until it is stored as completed; its id. */
export async function completedRun(page: Page, scenario: Record<string, unknown>): Promise<string> {
  const res = await page.request.post('/api/runs', { data: { scenario } });
  expect(res.status()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await expect
    .poll(
      async () => ((await (await page.request.get(`/api/runs/${id}`)).json()) as { status: string }).status,
      {
        timeout: 60_000,
      },
    )
    .toBe('completed');
  return id;
}

/**
 * Spawns `kbench broker --port 0` with these flags in a fresh data folder and reads its lines until
 * one matches `until`; `stop` ends it with SIGTERM, waits for it to finish writing, then removes its data.
 */
export async function startKbenchBroker(
  args: string[],
  until: RegExp,
): Promise<{ lines: string[]; stop: () => Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'kbench-e2e-broker-'));
  const broker = spawn(
    process.execPath,
    ['../apps/cli/dist/main.js', 'broker', '--port', '0', '--data-dir', dataDir, ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = once(broker, 'exit');
  const stop = async () => {
    if (broker.exitCode === null && broker.signalCode === null) {
      broker.kill('SIGTERM');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const lines: string[] = [];
  for await (const line of createInterface({ input: broker.stdout! })) {
    lines.push(line);
    if (until.test(line)) {
      broker.stdout!.resume(); // what it prints later is read and dropped, so it never blocks on a full pipe
      return { lines, stop };
    }
  }
  await stop();
  throw new Error(`kbench broker ${args.join(' ')} exited before printing ${until}`);
}
