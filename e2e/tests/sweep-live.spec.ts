// A sweep watched live: the page follows the sweep from one run to the next.
import { expect, test } from '@playwright/test';

const SWEEP =
  'name: e2e live sweep\ndriver: native\nduration: 2s\nproducers: { count: 1 }\nsweep: { knob: producers.messageSize, values: [10, 100] }\n';

test("a sweep's live page moves on to run 2 when run 1 ends", async ({ page }) => {
  const started = await page.request.post('/api/runs', { data: { yaml: SWEEP } });
  expect(started.status()).toBe(201);
  const { id: first } = (await started.json()) as { id: string };

  await page.goto(`/#/runs/${first}/live`);
  await expect(page.getByTestId('sweep-position')).toContainText('Sweep over producers.messageSize: run');
  await expect(page.getByTestId('sweep-position')).toContainText('run 2 of 2', { timeout: 60_000 });
  await expect(page).not.toHaveURL(new RegExp(`#/runs/${first}/live$`));
  // The last run ends where it is: its status, and the way to compare the sweep.
  await expect(page.getByTestId('run-status')).toHaveText('completed', { timeout: 60_000 });
  await expect(page.getByTestId('sweep-compare')).toBeVisible();
});
