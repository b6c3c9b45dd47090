// The history page as a person keeps it open: runs made elsewhere (the CLI) appear by themselves,
// a consumer-only run is listed by what it consumed, and the table fits a narrow window.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type APIRequestContext, expect, test } from '@playwright/test';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const KBENCH = fileURLToPath(new URL('../../apps/cli/dist/main.js', import.meta.url));

/** A few hundred records: a run of about a second. */
const TINY = 'name: e2e history tiny\ndriver: native\nrecords: 300\nproducers: { count: 1 }\n';
/** No producers: one consumer reads a small preloaded backlog. */
const CONSUMER_ONLY =
  'name: e2e consumer only, reading a preloaded backlog\ndriver: native\nduration: 2s\ntopics: { partitions: 1 }\nproducers: { count: 0 }\nconsumers: { count: 1, startAt: backlog, backlog: 1MB }\n';

/** Starts a run through the API and waits until it is stored as ended. */
async function runThroughApi(request: APIRequestContext, yaml: string): Promise<string> {
  const started = await request.post('/api/runs', { data: { yaml } });
  expect(started.status()).toBe(201);
  const { id } = (await started.json()) as { id: string };
  await expect
    .poll(async () => ((await (await request.get(`/api/runs/${id}`)).json()) as { status: string }).status, {
      timeout: 60_000,
    })
    .not.toBe('running');
  return id;
}

test('a run made by the CLI appears in an open history page without a reload', async ({ page }) => {
  await page.goto('/#/history');
  await expect(page.getByTestId('history-page')).toBeVisible();
  await expect(page.getByText('Loading runs…')).toHaveCount(0);

  const home = process.env.KBENCH_E2E_HOME;
  if (!home) throw new Error('KBENCH_E2E_HOME is set by playwright.config.ts');
  const file = join(home, 'history-cli.yaml');
  await writeFile(file, TINY);
  const stdout = await new Promise<string>((done, fail) =>
    execFile(
      process.execPath,
      [KBENCH, 'run', file, '--json'],
      { cwd: REPO, env: { ...process.env, KBENCH_HOME: home } },
      (err, out, stderr) => (err ? fail(new Error(`kbench run failed: ${stderr}`)) : done(out)),
    ),
  );
  const { id } = JSON.parse(stdout) as { id: string };

  const row = page.locator(`[data-testid=history-row][data-run-id="${id}"]`);
  await expect(row).toContainText('e2e history tiny');
  await expect(row.getByTestId('run-status')).toHaveText('completed');
});

test('a consumer-only run is listed by the rate it consumed', async ({ page }) => {
  const id = await runThroughApi(page.request, CONSUMER_ONLY);
  await page.goto('/#/history');
  const row = page.locator(`[data-testid=history-row][data-run-id="${id}"]`);
  await expect(row.getByTestId('run-status')).toHaveText('completed');
  const rate = row.getByTestId('history-rate');
  await expect(rate).toContainText('consumed');
  await expect(rate).toContainText(/[1-9][\d.,]*\s*(k|M)?\s*rec\/s/);
});

test('at 800 px the history table fits the window', async ({ page }) => {
  await runThroughApi(page.request, CONSUMER_ONLY);
  await runThroughApi(page.request, TINY);
  await page.setViewportSize({ width: 800, height: 900 });
  await page.goto('/#/history');
  const table = page.getByTestId('history-table');
  await expect(table).toBeVisible();
  const box = await table.boundingBox();
  if (!box) throw new Error('the history table is laid out');
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(800);
});
