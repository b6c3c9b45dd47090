// Two runs side by side: pick them in the history, compare (their latency heatmaps too), and
// download the files a person would take away (samples CSV, a chart PNG), checking what is in them.
import { readFile } from 'node:fs/promises';
import { expect, type Page, test } from '@playwright/test';
import { completedRun } from './runs.js';

/** A short run of acks 1 or all. */
function finishedRun(page: Page, acks: number | string): Promise<string> {
  return completedRun(page, { name: `acks ${acks}`, records: 2000, producers: { acks } });
}

test('compare two runs from the history and download their CSV and a chart PNG', async ({ page }) => {
  await page.goto('/');
  const first = await finishedRun(page, 1);
  const second = await finishedRun(page, 'all');

  await page.getByTestId('nav-history').click();
  for (const id of [first, second]) {
    await page
      .locator(`[data-testid="history-row"][data-run-id="${id}"] [data-testid="history-select"]`)
      .check();
  }
  await page.getByTestId('compare-button').click();

  await expect(page.getByTestId('compare-page')).toBeVisible();
  await expect(page.getByTestId('compare-table')).toContainText(first);
  await expect(page.getByTestId('compare-table')).toContainText(second);
  const difference = page.getByTestId('difference').filter({ hasText: 'producers.acks' });
  await expect(difference).toContainText('all');
  await expect(page.getByTestId('chart-publish-percentiles').locator('svg path').first()).toBeAttached();
  // Each run's latency heatmaps, named by its id, drawn from the histograms its samples stored.
  for (const id of [first, second]) {
    const heatmap = page.getByTestId(`chart-heatmap-publish-${id}`);
    await expect(heatmap).toContainText('Publish latency heatmap');
    await expect(heatmap).not.toContainText('no histograms stored');
  }

  const csvDownload = page.waitForEvent('download');
  await page.getByTestId(`csv-${first}`).click();
  const csv = await readFile((await (await csvDownload).path()) as string, 'utf8');
  expect(csv.split(/\r?\n/)[0]).toContain('produced_records');
  expect(csv.trim().split(/\r?\n/).length).toBeGreaterThan(1);

  const pngDownload = page.waitForEvent('download');
  await page.getByTestId('download-publish-percentiles-png').click();
  const png = await readFile((await (await pngDownload).path()) as string);
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  expect((await pngDownload).suggestedFilename()).toBe('kbench-compare-publish-percentiles.png');
});
