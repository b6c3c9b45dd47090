// A sweep's five runs compared in a 1280 px window: the curve against the swept setting, legends
// that keep the part of each name that differs, and figures as changes against a chosen baseline.
import { readFile } from 'node:fs/promises';
import { expect, type Page, test } from '@playwright/test';

// Long enough that the sweep value, at the end of each run's name, comes after 40 characters.
const NAME = 'a scenario whose name is long enough to be cut by a narrow legend';
const SIZES = [111, 222, 333, 444, 555];

let ids: string[] = [];

test.use({ viewport: { width: 1280, height: 900 } });

test.beforeAll(async ({ request }) => {
  const res = await request.post('/api/runs', {
    data: {
      scenario: {
        name: NAME,
        records: 2000,
        sweep: { knob: 'producers.messageSize', values: SIZES },
      },
    },
  });
  expect(res.status()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await expect
    .poll(
      async () =>
        ((await (await request.get(`/api/runs/${id}/sweep`)).json()) as { finished: boolean }).finished,
      {
        timeout: 150_000,
      },
    )
    .toBe(true);
  const sweep = (await (await request.get(`/api/runs/${id}/sweep`)).json()) as {
    ids: string[];
    error: string | null;
  };
  expect(sweep.error).toBeNull();
  ids = sweep.ids;
  expect(ids).toHaveLength(SIZES.length);
});

async function openComparison(page: Page): Promise<void> {
  await page.goto(`/#/compare/${ids.join(',')}`);
  await expect(page.getByTestId('compare-page')).toBeVisible();
}

test("a sweep's runs compared draw a curve against the swept setting, its values along the x axis", async ({
  page,
}) => {
  await openComparison(page);
  const curve = page.getByTestId('chart-knob-curve');
  await expect(curve.locator('svg')).toContainText('producers.messageSize');
  for (const size of SIZES) await expect(curve.locator('svg')).toContainText(String(size));
});

test('the curve against the swept setting downloads as a PNG, drawn on the server', async ({ page }) => {
  await openComparison(page);
  const download = page.waitForEvent('download');
  await page.getByTestId('download-knob-curve-png').click();
  expect((await download).suggestedFilename()).toBe('kbench-compare-knob-curve.png');
  const png = await readFile((await (await download).path()) as string);
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
});

test('the legends keep the part of each name that differs, even past 40 characters', async ({ page }) => {
  await openComparison(page);
  const ladder = page.getByTestId('chart-publish-percentiles').locator('svg');
  for (const size of SIZES) await expect(ladder).toContainText(`messageSize=${size}`);
});

test('choosing a baseline run shows every other run’s figures as +x% / -y% changes against it', async ({
  page,
}) => {
  await openComparison(page);
  await page.getByTestId('compare-baseline').selectOption(ids[0] as string);
  const produced = page.getByTestId('compare-table').locator('tr', { hasText: 'Produced' }).first();
  const deltas = produced.getByTestId('delta');
  await expect(deltas).toHaveCount(ids.length - 1);
  for (const text of await deltas.allTextContents()) expect(text).toMatch(/^[+-]\d+(\.\d+)?%$/);
});

test('five runs fit a 1280 px window with no horizontal scrolling, with and without a baseline', async ({
  page,
}) => {
  // Evaluated in the page (this package has no DOM types).
  const pageWidth = () => page.evaluate<number>('document.documentElement.scrollWidth');
  await openComparison(page);
  await expect(page.getByTestId('chart-publish-percentiles').locator('svg path').first()).toBeAttached();
  expect(await pageWidth()).toBeLessThanOrEqual(1280);
  await page.getByTestId('compare-baseline').selectOption(ids[0] as string);
  await expect(page.getByTestId('delta').first()).toBeVisible();
  expect(await pageWidth()).toBeLessThanOrEqual(1280);
});
