// A write-up reproduced from the browser: a tiny folder in the user's own scenarios, launched quick
// from the library, followed to its verdicts, and its runs opened in the comparison.
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const KBENCH = fileURLToPath(new URL('../../apps/cli/dist/main.js', import.meta.url));

function home(): string {
  const dir = process.env.KBENCH_E2E_HOME;
  if (!dir) throw new Error('KBENCH_E2E_HOME is set by playwright.config.ts');
  return dir;
}

/** A write-up folder among the user's own scenarios (listed as user/<folder>). */
async function writeUpFolder(folder: string, files: Record<string, string>): Promise<string> {
  const dir = join(home(), 'scenarios', folder);
  await mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

test.beforeAll(async () => {
  await writeUpFolder(FOLDER, FILES);
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
  // Seconds of measurement settle no direction: a quick run's verdicts say they are only indicative.
  await expect(sizes.getByTestId('verdict')).toContainText('indicative: matches');
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

test('the published figures of topic-count-2016 read as its published.yaml writes them', async ({ page }) => {
  await page.goto('/#/reproductions/topic-count-2016');
  const figures = page.getByTestId('published-figures');
  await expect(figures.locator('th')).toHaveText(['1 topic', '50,001 and 120,001 topics']);
  await expect(figures).toContainText('worse, roughly 200-500 ms average on that VM');
  await expect(figures).not.toContainText('null');
});

test('a full reproduction says how long it takes and starts only once confirmed', async ({
  page,
  request,
}) => {
  await page.goto('/#/reproductions/redpanda-2021');
  await expect(page.getByTestId('no-reproduction')).toBeVisible();
  await page.getByTestId('reproduce').click();
  const confirm = page.getByTestId('reproduce-confirm');
  await expect(confirm).toBeVisible();
  await expect(confirm).toContainText(/\d+ runs/);
  await expect(confirm).toContainText(/about 1 h \d+ min/);
  await confirm.getByTestId('reproduce-cancel').click();
  await expect(confirm).toBeHidden();
  await expect(page.getByTestId('no-reproduction')).toBeVisible();
  const runs = (await (await request.get('/api/runs?search=redpanda')).json()) as unknown[];
  expect(runs).toEqual([]);
});

test('a reproduction under way shows a bar and the time left, and its Stop ends the series', async ({
  page,
  request,
}) => {
  const long = (name: string) =>
    `name: ${name}\ndescription: a long steady producer\ndriver: native\nduration: 60s\nproducers: { count: 1, rate: 1000 }\n`;
  await writeUpFolder('long-e2e', {
    'published.yaml': `title: Two long runs\nexperiments:\n  - scenario: first.yaml\n    title: The first\n    published: { throughput: "1,000 rec/s" }\n  - scenario: second.yaml\n    title: The second\n    published: { throughput: "1,000 rec/s" }\n`,
    'first.yaml': long('web-long-e2e first'),
    'second.yaml': long('web-long-e2e second'),
  });
  await page.goto('/#/reproductions/user%2Flong-e2e');
  await page.getByTestId('reproduce').click();
  const confirm = page.getByTestId('reproduce-confirm');
  await expect(confirm).toContainText('2 runs');
  await expect(confirm).toContainText('about 2 min');
  await confirm.getByTestId('reproduce-confirm-start').click();

  const running = page.getByTestId('reproduction-running');
  await expect(running).toContainText('Run 1 of 2');
  await expect(running.getByRole('progressbar')).toBeVisible();
  await expect(running.getByTestId('reproduction-eta')).toContainText(/about \d+ (min|s) left/);
  await running.getByTestId('reproduction-stop').click();

  await expect(page.getByTestId('reproduction-done')).toContainText('Stopped at run 1 of 2');
  await expect(page.getByTestId('reproduction-running')).toBeHidden();
  const first = page.getByTestId('experiment-first.yaml').getByTestId('our-run');
  await expect(first).toHaveCount(1);
  await expect(first).toContainText('stopped');
  await expect(page.getByTestId('experiment-second.yaml').getByTestId('our-run')).toHaveCount(0);
  const runs = (await (await request.get('/api/runs?search=web-long-e2e')).json()) as { status: string }[];
  expect(runs.map((r) => r.status)).toEqual(['stopped']);
});

test('a reproduction run by the CLI shows on the reproduction page with its verdicts', async ({ page }) => {
  const dir = await writeUpFolder('cli-e2e', {
    'published.yaml': `title: A write-up run from the CLI\nexperiments:\n  - scenario: sizes.yaml\n    title: Message size sweep\n    published: { "10 B": "1,000 rec/s", "1000 B": "400 rec/s" }\n    figures: [produced.recordsPerSec, produced.mbPerSec]\n    checks:\n      - expect: { metric: produced.mbPerSec, across: producers.messageSize, direction: increasing }\n        says: MB/s rises with the message size\n`,
    'sizes.yaml':
      'name: cli sizes\ndescription: two message sizes\ndriver: native\nduration: 2s\nproducers: { count: 1 }\nsweep: { knob: producers.messageSize, values: [10, 1000] }\n',
  });
  const child = spawn(process.execPath, [KBENCH, 'reproduce', dir, '--quick'], {
    cwd: REPO,
    env: { ...process.env, KBENCH_HOME: home() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  expect(code, output).toBe(0);

  await page.goto('/#/reproductions/user%2Fcli-e2e');
  const reproduction = page.getByTestId('reproduction-page');
  await expect(reproduction.getByTestId('reproduction-done')).toContainText('Stored: 2 runs');
  await expect(reproduction.getByTestId('reproduction-select').locator('option')).toContainText(['(quick)']);
  const sizes = reproduction.getByTestId('experiment-sizes.yaml');
  await expect(sizes.getByTestId('our-run')).toHaveCount(2);
  await expect(sizes.getByTestId('verdict')).toContainText('indicative: matches');
});

test('a CLI reproduction under way shows its progress on the page, and Stop there stops the CLI', async ({
  page,
}) => {
  const long = (name: string) =>
    `name: ${name}\ndescription: a long steady producer\ndriver: native\nduration: 60s\nproducers: { count: 1, rate: 1000 }\n`;
  const dir = await writeUpFolder('cli-long-e2e', {
    'published.yaml': `title: Two long runs from the CLI\nexperiments:\n  - scenario: first.yaml\n    title: The first\n    published: { throughput: "1,000 rec/s" }\n  - scenario: second.yaml\n    title: The second\n    published: { throughput: "1,000 rec/s" }\n`,
    'first.yaml': long('cli long first'),
    'second.yaml': long('cli long second'),
  });
  const child = spawn(
    process.execPath,
    [KBENCH, 'reproduce', dir, '--out', join(home(), 'cli-long-report')],
    {
      cwd: REPO,
      env: { ...process.env, KBENCH_HOME: home() },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<number | null>((done) => child.on('exit', done));
  let stderr = '';
  await new Promise<void>((done, fail) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/run [0-9a-f]{12}: /.test(stderr)) done();
    });
    void exited.then((code) => fail(new Error(`kbench reproduce exited ${code}:\n${stderr}`)));
  });
  try {
    await page.goto('/#/reproductions/user%2Fcli-long-e2e');
    const running = page.getByTestId('reproduction-running');
    await expect(running).toContainText('Run 1 of 2');
    await expect(running).toContainText(`run by `);
    await expect(running).toContainText(`kbench reproduce, pid ${child.pid}`);
    await expect(running.getByRole('progressbar')).toBeVisible();
    await running.getByTestId('reproduction-stop').click();
    expect(await exited).toBe(130);
    await expect(page.getByTestId('reproduction-done')).toContainText('Stored: 1 run');
    await expect(page.getByTestId('experiment-first.yaml').getByTestId('our-run')).toContainText('stopped');
  } finally {
    if (child.exitCode === null) child.kill('SIGINT');
    await exited;
  }
});
