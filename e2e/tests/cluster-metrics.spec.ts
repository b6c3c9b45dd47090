// The cluster's own metrics on the run page: a broker started with `kbench broker --metrics`, a
// profile naming that endpoint, a run on the profile; the run page draws the scraped node in its
// node charts (traffic, health, CPU) and lists the endpoint with its scrapes.
import { expect, test } from '@playwright/test';
import { completedRun, startKbenchBroker } from './runs.js';

let stopBroker: (() => Promise<void>) | undefined;

test.afterAll(async () => {
  await stopBroker?.();
});

/** `kbench broker --metrics 127.0.0.1:0`: its bootstrap and its metrics address, from the lines it prints. */
async function startBroker(): Promise<{ bootstrap: string; metrics: string }> {
  const { lines, stop } = await startKbenchBroker(['--metrics', '127.0.0.1:0'], /^metrics /);
  stopBroker = stop;
  const bootstrap = lines.map((l) => /^node 1 (127\.0\.0\.1:\d+) pid \d+$/.exec(l)?.[1]).find(Boolean);
  const metrics = /^metrics (127\.0\.0\.1:\d+)$/.exec(lines.at(-1) ?? '')?.[1];
  if (!bootstrap || !metrics) throw new Error(`kbench broker printed ${lines.join(' | ')}`);
  return { bootstrap, metrics };
}

test("a profile's metrics endpoint: the run page draws its node and lists its scrapes", async ({ page }) => {
  const { bootstrap, metrics } = await startBroker();
  const created = await page.request.post('/api/profiles', {
    data: { name: 'e2e-metrics', bootstrap, metrics: [{ url: `http://${metrics}/metrics`, node: 'kb-1' }] },
  });
  expect(created.status()).toBe(201);
  const listed = (await (await page.request.get('/api/profiles')).json()) as {
    name: string;
    metrics?: unknown;
  }[];
  expect(listed.find((p) => p.name === 'e2e-metrics')?.metrics).toEqual([
    { url: `http://${metrics}/metrics`, kind: 'auto', node: 'kb-1' },
  ]);
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
