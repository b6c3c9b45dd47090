// The cluster's own metrics on the run page: a broker started with `kbench broker --metrics`, a
// profile naming that endpoint, a run on the profile; the run page draws the scraped node in its
// node charts (traffic, health, CPU) and lists the endpoint with its scrapes.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, test } from '@playwright/test';
import { completedRun } from './runs.js';

let broker: ChildProcess | undefined;
let dataDir: string | undefined;

test.afterAll(async () => {
  if (broker && broker.exitCode === null && broker.signalCode === null) {
    const exited = once(broker, 'exit');
    broker.kill('SIGTERM');
    await exited;
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** `kbench broker --metrics 127.0.0.1:0`: its bootstrap and its metrics address, from the lines it prints. */
async function startBroker(): Promise<{ bootstrap: string; metrics: string }> {
  dataDir = await mkdtemp(join(tmpdir(), 'kbench-e2e-metrics-'));
  broker = spawn(
    process.execPath,
    ['../apps/cli/dist/main.js', 'broker', '--port', '0', '--data-dir', dataDir, '--metrics', '127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let bootstrap: string | undefined;
  for await (const line of createInterface({ input: broker.stdout! })) {
    bootstrap ??= /^node 1 (127\.0\.0\.1:\d+) pid \d+$/.exec(line)?.[1];
    const metrics = /^metrics (127\.0\.0\.1:\d+)$/.exec(line)?.[1];
    if (bootstrap && metrics) return { bootstrap, metrics };
  }
  throw new Error('kbench broker did not start');
}

test("a profile's metrics endpoint: the run page draws its node and lists its scrapes", async ({ page }) => {
  const { bootstrap, metrics } = await startBroker();
  const created = await page.request.post('/api/profiles', {
    data: { name: 'e2e-metrics', bootstrap, metrics: [{ url: `http://${metrics}/metrics`, node: 'kb-1' }] },
  });
  expect(created.status()).toBe(201);
  const id = await completedRun(page, {
    name: 'e2e-cluster-metrics',
    target: 'e2e-metrics',
    duration: '4s',
    warmup: '0s',
    producers: { count: 1, rate: 2000, messageSize: 200 },
    consumers: { count: 1 },
  });

  await page.goto(`/#/runs/${id}`);
  await expect(page.getByTestId('run-page')).toBeVisible();
  for (const chart of ['broker-traffic', 'broker-health', 'broker-cpu'])
    await expect(page.getByTestId(`chart-${chart}`)).toBeVisible();
  // kbench-broker serves no produce latency: that chart is not drawn.
  await expect(page.getByTestId('chart-broker-produce-latency')).toHaveCount(0);
  await expect(
    page.getByTestId('environment').getByRole('row', { name: /^Metrics endpoints/ }),
  ).toContainText(/kb-1 \(kbench\): \d+ scrapes, 0 failed/);
  // The chart's node is the stored figures' node, by name.
  const samples = (await (await page.request.get(`/api/runs/${id}/samples`)).json()) as {
    broker?: { name?: string; source?: string; bytesInPerSec: number }[];
  }[];
  const scraped = samples.flatMap((s) => s.broker ?? []).filter((n) => n.source === 'kbench');
  expect(scraped.every((n) => n.name === 'kb-1')).toBe(true);
  expect(Math.max(...scraped.map((n) => n.bytesInPerSec))).toBeGreaterThan(0);
});
