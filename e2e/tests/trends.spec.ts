// A scenario's trend: several real short runs of one scenario on the bundled broker, the Trends page
// reached from the history and from a run, a chart per headline figure, and a point that opens its run.
import { readFile } from 'node:fs/promises';
import type { Trend } from '@kbench/schema';
import { expect, test } from '@playwright/test';
import { completedRun } from './runs.js';

const SCENARIO = 'trend e2e';

test('the trend of a scenario: charts per figure from the history and a run, a point opens its run', async ({
  page,
}) => {
  test.setTimeout(300_000);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++)
    ids.push(await completedRun(page, { name: SCENARIO, records: 2000, consumers: { count: 1 } }));

  await page.goto('/#/history');
  await page
    .locator(`[data-testid="history-row"][data-run-id="${ids[1]}"] [data-testid="trend-link"]`)
    .click();
  await expect(page.getByTestId('trends-page')).toBeVisible();
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`${SCENARIO} on bundled`);

  // A chart per headline figure, each with a line drawn through the four runs.
  for (const id of [
    'produced-recordspersec',
    'produced-mbpersec',
    'publishlatencyms-p50',
    'publishlatencyms-p99',
    'endtoendlatencyms-p99',
    'consumed-recordspersec',
  ]) {
    await expect(page.getByTestId(`chart-trend-${id}`).locator('svg path').first()).toBeAttached();
  }
  await expect(page.getByTestId('trend-run')).toHaveCount(4);
  await expect(page.getByTestId('trend-few-runs')).toBeVisible();
  await expect(page.getByTestId('trend-run').first()).toHaveAttribute('data-run-id', ids[0] as string);

  // Each chart downloads as the server draws it.
  const download = page.waitForEvent('download');
  await page.getByTestId('download-trend-produced-recordspersec-svg').click();
  expect((await download).suggestedFilename()).toBe('kbench-trend-produced-recordspersec.svg');
  expect(await readFile((await (await download).path()) as string, 'utf8')).toContain(
    'produced rec/s over time',
  );

  // The best run by produced rec/s is the one the API names; its point, labelled "best", opens it.
  const trend = (await (
    await page.request.get(`/api/trends?scenario=${encodeURIComponent(SCENARIO)}`)
  ).json()) as Trend;
  const best = trend.series.find((s) => s.metric === 'produced.recordsPerSec')?.best?.runId;
  expect(ids).toContain(best);
  await page
    .getByTestId('chart-trend-produced-recordspersec')
    .locator('svg text', { hasText: /^best$/ })
    .click();
  await expect(page.getByTestId('run-page')).toBeVisible();
  expect(page.url()).toMatch(new RegExp(`#/runs/${best}$`));

  // From a run, its trend on its target.
  await page.getByTestId('trend-link').click();
  await expect(page.getByTestId('trends-page')).toBeVisible();
  await expect(page.getByTestId('trend-run')).toHaveCount(4);
});
