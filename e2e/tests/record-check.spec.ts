// The record check on the run page (docs/scenarios.md#record-check-verify): a native run with
// verify: true shows its verdict beside the summary, with the count of acknowledged records it found.
import { expect, test } from '@playwright/test';
import { completedRun } from './runs.js';

test('the run page shows the record check of a run with verify: true', async ({ page }) => {
  await page.goto('/');
  const id = await completedRun(page, {
    name: 'record check',
    driver: 'native',
    verify: true,
    duration: '2s',
    topics: { partitions: 2 },
    producers: { count: 1, rate: 2000 },
  });
  const stored = (await (await page.request.get(`/api/runs/${id}`)).json()) as {
    summary: { verification: { verdict: string; totals: { acknowledged: number } } };
  };
  const { verdict, totals } = stored.summary.verification;
  expect(verdict).toBe('passed');
  await page.goto(`/#/runs/${id}`);
  const panel = page.getByTestId('verification');
  await expect(panel).toHaveAttribute('data-verdict', 'passed');
  await expect(panel).toHaveText(
    `Record check passed: all ${totals.acknowledged.toLocaleString('en-US')} acknowledged records found once each, in order`,
  );
});
