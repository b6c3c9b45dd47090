// A write-up reproduced from the browser: a tiny folder in the user's own scenarios, launched quick
// from the library, followed to its verdicts, and its runs opened in the comparison.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';

const FOLDER = 'tiny-e2e';
const FILES: Record<string, string> = {
  'published.yaml': `title: A tiny write-up
url: https://example.com/tiny
setup: one laptop, one broker
experiments:
  - scenario: sizes.yaml
    title: Message size sweep
    published: { "10 B": "1,000 rec/s", "1000 B": "400 rec/s" }
    figures: [produced.recordsPerSec, produced.mbPerSec]
    checks:
      - expect: { metric: produced.mbPerSec, across: producers.messageSize, direction: increasing }
        says: MB/s rises with the message size
  - scenario: steady.yaml
    title: A steady producer
    published: { throughput: "2,000 rec/s" }
    checks:
      - compare: { a: steady.yaml, b: "sizes.yaml[10]", metric: produced.recordsPerSec, expect: lower }
        says: a capped producer sends less than an uncapped one
`,
  'sizes.yaml':
    'name: tiny sizes\ndescription: two message sizes, one after the other\ndriver: native\nduration: 2s\nproducers: { count: 1 }\nsweep: { knob: producers.messageSize, values: [10, 1000] }\n',
  'steady.yaml':
    'name: tiny steady\ndescription: one producer capped at 2,000 records a second\ndriver: native\nduration: 2s\nproducers: { count: 1, rate: 2000 }\n',
};

test.beforeAll(async () => {
  const home = process.env.KBENCH_E2E_HOME;
  if (!home) throw new Error('KBENCH_E2E_HOME is set by playwright.config.ts');
  const dir = join(home, 'scenarios', FOLDER);
  await mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(FILES)) await writeFile(join(dir, file), text);
});

test('reproduce a write-up quick from the library, read its verdicts and compare its runs', async ({
  page,
}) => {
  await page.goto('/');
  const folder = page.locator(`[data-testid="scenario-folder"][data-folder="user/${FOLDER}"]`);
  await expect(folder.getByTestId('writeup-title')).toHaveText('A tiny write-up');
  await expect(folder.getByTestId('writeup-link')).toHaveAttribute('href', 'https://example.com/tiny');
  await expect(folder.getByTestId('scenario')).toHaveCount(2);
  await expect(folder).toContainText('two message sizes, one after the other');

  await folder.getByTestId('reproduce-quick').click();
  const reproduction = page.getByTestId('reproduction-page');
  await expect(reproduction).toBeVisible();
  await expect(reproduction.getByTestId('reproduction-running')).toContainText(/Run \d of 3/);
  await expect(reproduction.getByTestId('reproduction-done')).toContainText('Finished: 3 of 3 runs', {
    timeout: 90_000,
  });

  const sizes = reproduction.getByTestId('experiment-sizes.yaml');
  await expect(sizes.getByTestId('published-figures')).toContainText('1,000 rec/s');
  await expect(sizes.getByTestId('our-run')).toHaveCount(2);
  await expect(sizes.getByTestId('verdict')).toHaveAttribute('data-outcome', 'match');
  await expect(sizes.getByTestId('verdict')).toContainText('MB/s rises with the message size');
  const steady = reproduction.getByTestId('experiment-steady.yaml');
  await expect(steady.getByTestId('verdict')).toHaveAttribute('data-outcome', /^(match|mismatch)$/);
  await expect(reproduction.getByTestId('reproduction-select').locator('option')).toHaveCount(1);

  const sizeIds = await sizes
    .getByTestId('our-run')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
  await sizes.getByTestId('compare-experiment').click();
  await expect(page.getByTestId('compare-page')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Compare 2 runs' })).toBeVisible();
  for (const id of sizeIds) await expect(page.getByTestId('compare-table')).toContainText(id as string);

  await page.goBack();
  await page.getByTestId('compare-all').click();
  await expect(page.getByRole('heading', { name: 'Compare 3 runs' })).toBeVisible();
});
