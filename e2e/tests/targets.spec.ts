// Compare targets from the composer: a profile for a second cluster (here a bundled broker started
// with `kbench broker`, reached by bootstrap as an external cluster would be), then one scenario on
// both targets in turn, ending on the comparison page.
import { expect, test } from '@playwright/test';
import { startKbenchBroker } from './runs.js';

let stopBroker: (() => Promise<void>) | undefined;

test.afterAll(async () => {
  // `kbench broker` serves until told to stop; it finishes writing its clean-shutdown files before
  // its data is removed.
  await stopBroker?.();
});

async function startBroker(): Promise<string> {
  const { lines, stop } = await startKbenchBroker([], /^node 1 127\.0\.0\.1:\d+ pid \d+$/);
  stopBroker = stop;
  return /^node 1 (127\.0\.0\.1:\d+)/.exec(lines.at(-1) ?? '')?.[1] ?? '';
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
