// Compare targets from the composer: a profile for a second cluster (here a bundled broker started
// with `kbench broker`, reached by bootstrap as an external cluster would be), then one scenario on
// both targets in turn, ending on the comparison page.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, test } from '@playwright/test';

let broker: ChildProcess | undefined;
let dataDir: string | undefined;

test.afterAll(async () => {
  // `kbench broker` now serves until told to stop; wait for it to finish writing its
  // clean-shutdown files before removing its data.
  if (broker && broker.exitCode === null && broker.signalCode === null) {
    const exited = once(broker, 'exit');
    broker.kill('SIGTERM');
    await exited;
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function startBroker(): Promise<string> {
  dataDir = await mkdtemp(join(tmpdir(), 'kbench-e2e-broker-'));
  broker = spawn(
    process.execPath,
    ['../apps/cli/dist/main.js', 'broker', '--port', '0', '--data-dir', dataDir],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: broker.stdout! });
  for await (const line of lines) {
    const match = /^node 1 (127\.0\.0\.1:\d+) pid \d+$/.exec(line);
    if (match?.[1]) return match[1];
  }
  throw new Error('kbench broker did not start');
}

test('compare targets: one scenario on the bundled broker and on a profile, then side by side', async ({
  page,
}) => {
  const bootstrap = await startBroker();
  const created = await page.request.post('/api/profiles', {
    data: { name: 'e2e-remote', bootstrap, description: 'a second broker' },
  });
  expect(created.status()).toBe(201);

  await page.goto('/#/compose');
  await page.getByTestId('composer-reset').click();
  await page.getByTestId('field-duration').locator('input').fill('3s');
  await page.getByTestId('field-warmup').locator('input').fill('1s');
  // The target field offers the profiles too.
  await expect(page.locator('#field-target-examples option[value="e2e-remote"]')).toHaveCount(1);

  const launch = page.getByTestId('compare-targets-launch');
  await page.getByTestId('compare-target-bundled').check();
  await expect(launch).toBeDisabled();
  await page.getByTestId('compare-target-e2e-remote').check();
  await expect(launch).toHaveText('▶ Compare 2 targets');
  await launch.click();

  await expect(page).toHaveURL(/#\/runs\/[a-f0-9]+\/live$/);
  await expect(page.getByTestId('sweep-position')).toContainText('Comparing targets: run 1 of 2');
  // The live page follows the series and opens the comparison by itself.
  await expect(page).toHaveURL(/#\/compare\/[a-f0-9]+,[a-f0-9]+$/, { timeout: 120_000 });
  await expect(page.getByTestId('compare-page')).toBeVisible();
  const difference = page.getByTestId('difference').filter({ hasText: 'target' });
  await expect(difference).toContainText('bundled');
  await expect(difference).toContainText('e2e-remote');
});
