// Refreshes the screenshots in docs/screenshots from the real product: `npm run screenshots -w @kbench/e2e`.
// Starts `kbench serve` on a fresh history, drives Chromium, and overwrites live-run.png (a 3-node cluster
// run with a fault, broker charts included), composer.png (a validation error and the fault rows),
// library.png and reproduction.png (a quick reproduction of kreps-2014 with its verdicts), and
// trends.png (ten runs of one scenario, the last five with fsync batch: a change point).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(repo, 'docs', 'screenshots');
const port = 7445;
const base = `http://127.0.0.1:${port}`;
const home = mkdtempSync(join(tmpdir(), 'kbench-shots-'));

const server = spawn(
  process.execPath,
  [join(repo, 'apps/cli/bin/kbench.js'), 'serve', '--port', String(port)],
  {
    env: { ...process.env, KBENCH_HOME: home },
    stdio: ['ignore', 'inherit', 'inherit'],
  },
);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/api/health`)).ok) break;
  } catch {}
  if (i > 100) throw new Error('kbench serve did not start');
  await sleep(100);
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-quic'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });

  // A live run on a 3-node cluster with replication and a paused node.
  const scenario = {
    name: 'screenshot: 3 nodes, RF 3, acks=all, node 2 paused',
    cluster: { nodes: 3 },
    topics: { partitions: 6, replicationFactor: 3, minInsyncReplicas: 2 },
    producers: { count: 1, acks: 'all', rate: 20000 },
    consumers: { count: 1 },
    duration: '14s',
    warmup: '2s',
    faults: [{ at: '6s', action: 'pause', node: 2, for: '1500ms' }],
  };
  const started = await fetch(`${base}/api/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ scenario }),
  });
  if (started.status !== 201) throw new Error(`run not started: ${started.status} ${await started.text()}`);
  const { id } = await started.json();
  await page.goto(`${base}/#/runs/${id}/live`);
  await sleep(12_000);
  await page.screenshot({ path: join(out, 'live-run.png'), fullPage: true });

  // The composer: the quick start with a bad value, and a fault row.
  await page.goto(`${base}/`);
  await page
    .locator('[data-testid="scenario"][data-path="quickstart.yaml"]')
    .getByTestId('edit-scenario')
    .click();
  await page.getByTestId('composer-page').waitFor();
  await page.getByText('all knobs').click();
  await page.getByTestId('field-topics.partitions').locator('input').fill('0');
  await page.getByTestId('fault-add').click();
  await page.getByTestId('fault-0').getByTestId('fault-0-action').locator('select').selectOption('pause');
  await page.getByTestId('fault-0').getByTestId('fault-0-for').locator('input').fill('1s');
  await sleep(500);
  await page.screenshot({ path: join(out, 'composer.png'), fullPage: true });

  // The library with its write-ups, then a quick reproduction of kreps-2014 and its verdicts, once
  // the live run above has ended (one run at a time).
  for (let i = 0; (await (await fetch(`${base}/api/runs/${id}`)).json()).status === 'running'; i++) {
    if (i > 600) throw new Error(`run ${id} did not end`);
    await sleep(100);
  }
  await page.goto(`${base}/`);
  await page.locator('[data-testid="scenario"]').first().waitFor();
  await page.screenshot({ path: join(out, 'library.png') });
  const reproduce = await fetch(`${base}/api/reproductions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ folder: 'kreps-2014', quick: true }),
  });
  if (reproduce.status !== 201)
    throw new Error(`reproduction not started: ${reproduce.status} ${await reproduce.text()}`);
  await page.goto(`${base}/#/reproductions/kreps-2014`);
  await page.getByTestId('reproduction-done').waitFor({ timeout: 300_000 });
  await sleep(1000);
  await page.screenshot({ path: join(out, 'reproduction.png'), fullPage: true });
  // A trend: ten short runs of one scenario, the last five with fsync batch (a real slowdown), the
  // change point found and the best run marked.
  const trendName = 'screenshot: trend, fsync none then batch';
  for (const fsync of [...Array(5).fill('none'), ...Array(5).fill('batch')]) {
    const run = await fetch(`${base}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({
        scenario: {
          name: trendName,
          cluster: { fsync },
          duration: '3s',
          warmup: '1s',
          consumers: { count: 1 },
        },
      }),
    });
    if (run.status !== 201) throw new Error(`run not started: ${run.status} ${await run.text()}`);
    const { id: runId } = await run.json();
    for (;;) {
      const { status } = await (await fetch(`${base}/api/runs/${runId}`)).json();
      if (status !== 'running') break;
      await sleep(500);
    }
  }
  await page.goto(`${base}/#/trends/${encodeURIComponent(trendName)}/bundled`);
  await page.getByTestId('trends-page').waitFor();
  await sleep(1000);
  await page.screenshot({ path: join(out, 'trends.png'), fullPage: true });
} finally {
  await browser.close();
  server.kill('SIGTERM');
}
