import { PALETTE } from '@kbench/charts';
import { expect, test } from '@playwright/test';

/** The number in a figure such as "12.3 k rec/s", scaled by its prefix. */
function recordsPerSec(text: string): number {
  const match = /([\d.,]+)\s*(k|M)?\s*rec\/s/.exec(text);
  if (!match?.[1]) return Number.NaN;
  const scale = match[2] === 'M' ? 1e6 : match[2] === 'k' ? 1e3 : 1;
  return Number(match[1].replace(/,/g, '')) * scale;
}

test('launch the quickstart scenario, watch it live, and find it in the history', async ({
  page,
}, testInfo) => {
  await page.goto('/');

  // The library: folders of scenarios, the quick start among them.
  await expect(page.getByTestId('scenarios-page')).toBeVisible();
  await expect(page.locator('[data-testid=scenario-folder][data-folder="kreps-2014"]')).toBeVisible();
  const quickstart = page.locator('[data-testid=scenario][data-path="quickstart.yaml"]');
  await expect(quickstart).toContainText('quickstart');

  await quickstart.getByTestId('run-scenario').click();
  await expect(page).toHaveURL(/#\/runs\/[0-9a-f]+\/live$/);
  const runId = /#\/runs\/([0-9a-f]+)\/live$/.exec(page.url())?.[1];
  expect(runId).toBeTruthy();

  // Live: a progress bar that reaches the load phases, and figures from the stream.
  await expect(page.getByTestId('progress')).toBeVisible();
  await expect(page.getByTestId('progress-phase')).toHaveText(/Warming up|Measuring/);
  await expect(page.getByTestId('live-figures')).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('live.png'), fullPage: true });

  // The end: status completed, the summary with a real throughput, and the final charts.
  await expect(page.getByTestId('run-status')).toHaveText('completed', { timeout: 90_000 });
  const rate = await page.getByTestId('summary-produced-rate').textContent();
  expect(recordsPerSec(rate ?? '')).toBeGreaterThan(0);

  const throughput = page.getByTestId('chart-throughput');
  await expect(throughput.locator('svg')).toBeVisible();
  // The produced line is drawn in the first palette colour (its legend icon too): a path through the samples.
  const producedPaths = throughput.locator(`svg path[stroke="${PALETTE[0]}"]`);
  await expect(producedPaths.first()).toBeAttached();
  const segments = await producedPaths.evaluateAll((paths) =>
    Math.max(...paths.map((p) => (p.getAttribute('d') ?? '').match(/L/g)?.length ?? 0)),
  );
  // A 10 s run samples about once a second: the line passes through most of those points.
  expect(segments).toBeGreaterThanOrEqual(5);
  await page.screenshot({ path: testInfo.outputPath('finished.png'), fullPage: true });

  // History: the run is listed, completed, and opens its page.
  await page.getByTestId('nav-history').click();
  const row = page.locator(`[data-testid=history-row][data-run-id="${runId}"]`);
  await expect(row).toContainText('quickstart');
  await expect(row.getByTestId('run-status')).toHaveText('completed');
  await row.click();
  await expect(page.getByTestId('run-page')).toBeVisible();
  await expect(page.getByTestId('csv-link')).toHaveAttribute('href', `/api/runs/${runId}/samples.csv`);
  await expect(page.getByTestId('scenario-yaml')).toContainText('name: quickstart');
  await expect(page.getByTestId('chart-throughput').locator('svg')).toBeVisible();
  await expect(page.getByTestId('summary-produced-rate')).toHaveText(rate ?? '');
  await page.screenshot({ path: testInfo.outputPath('run-page.png'), fullPage: true });
});

test('stop a run from the live page', async ({ page }) => {
  await page.goto('/');
  await page
    .locator('[data-testid=scenario][data-path="quickstart.yaml"]')
    .getByTestId('run-scenario')
    .click();
  await expect(page.getByTestId('progress-phase')).toHaveText(/Warming up|Measuring/);
  await page.getByTestId('stop-run').click();
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 60_000 });
  await expect(page.getByTestId('stop-run')).toHaveCount(0);
  await expect(page.getByTestId('open-run')).toBeVisible();
});
