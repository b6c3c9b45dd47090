// The run page shows what `kbench run` prints (and the comparison its rate shortfall): every percentile, bytes on the wire, how hard the load
// generator worked (with the warning when it set the pace) and the faults executed with what each
// cost (a table and a band on the charts); a run that
// measured nothing shows as failed, with the reason; a bundled run over SASL_SSL shows how it connected;
// a run sampled every 200 ms shows its latency heatmaps and offers its histograms for download.
import { join } from 'node:path';
import { History } from '@kbench/history';
import { clientPaceWarning, parseScenario, type RunSummary } from '@kbench/schema';
import { expect, type Page, test } from '@playwright/test';

interface StoredRun {
  status: string;
  error: string | null;
  summary: RunSummary | null;
}

/** Starts a run through the API, as the Run button does, and waits until it is stored. */
async function finishedRun(page: Page, scenario: Record<string, unknown>): Promise<[string, StoredRun]> {
  const res = await page.request.post('/api/runs', { data: { scenario } });
  expect(res.status()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  let stored: StoredRun | undefined;
  await expect
    .poll(
      async () => {
        stored = (await (await page.request.get(`/api/runs/${id}`)).json()) as StoredRun;
        return stored.status;
      },
      { timeout: 90_000 },
    )
    .not.toBe('running');
  return [id, stored as StoredRun];
}

const TIME = /^\d[\d.,]* (µs|ms|s)$/;

test('the run page warns when an open-loop run did not reach its rate', async ({ page }) => {
  await page.goto('/');
  // Far beyond one native producer here: the schedule falls behind at once.
  const [id, stored] = await finishedRun(page, {
    name: 'rate not reached',
    driver: 'native',
    duration: '3s',
    warmup: '1s',
    producers: { count: 1, rate: 100_000_000 },
  });
  expect(stored.status, String(stored.error)).toBe('completed');
  const reached = Math.round(stored.summary?.produced.recordsPerSec ?? 0).toLocaleString('en-US');
  await page.goto(`/#/runs/${id}`);
  await expect(page.getByTestId('rate-shortfall-warning')).toContainText(
    `Warning: the producers reached ${reached} of the 100,000,000 records/s asked`,
  );
  // Beside another run in the comparison, it still says so.
  const [other] = await finishedRun(page, {
    name: 'rate reached',
    driver: 'native',
    duration: '2s',
    warmup: '1s',
    producers: { count: 1, rate: 1000 },
  });
  await page.goto(`/#/compare/${id},${other}`);
  // (Other caveats may come first: a busy machine says so too.)
  const caveats = page.getByTestId('caveat-warning').filter({ hasText: `Run ${id}:` });
  await expect(caveats).toContainText(`reached ${reached} of the 100,000,000 records/s asked`);
  await expect(caveats).toContainText("so its figures are not the target's alone");
});

test('the run page says how many client errors a run saw and what they said', async ({ page }) => {
  await page.goto('/');
  // The only node is down for a second: the clients' connections to it are refused meanwhile.
  const [id, stored] = await finishedRun(page, {
    name: 'client errors',
    driver: 'native',
    duration: '4s',
    topics: { partitions: 2 },
    producers: { count: 1, rate: 1000, acks: 1 },
    faults: [
      { at: '1s', action: 'kill', node: 1 },
      { at: '2s', action: 'restart', node: 1 },
    ],
  });
  expect(stored.status, String(stored.error)).toBe('completed');
  const errors = stored.summary?.produced.errors ?? 0;
  const said = stored.summary?.clientErrors ?? [];
  expect(errors).toBeGreaterThan(0);
  await page.goto(`/#/runs/${id}`);
  const note = page.getByTestId('client-errors');
  await expect(note).toContainText(`Client errors in the measured phase: ${errors.toLocaleString('en-US')}`);
  await expect(note.locator('tbody tr')).toHaveCount(said.length);
  await expect(note.locator('tbody tr').first()).toContainText(said[0]?.message ?? 'none');
});

test('the run page shows the percentiles, wire MB/s, the load generator and the faults of a real run', async ({
  page,
}) => {
  await page.goto('/');
  const [id, stored] = await finishedRun(page, {
    name: 'paused node',
    driver: 'kafkajs',
    duration: '4s',
    warmup: '1s',
    cluster: { nodes: 2 },
    topics: { partitions: 2, replicationFactor: 2 },
    producers: { count: 1 },
    consumers: { count: 1 },
    faults: [
      { at: '1s', action: 'command', run: 'echo e2e-marker' },
      { at: '2s', action: 'pause', node: 2, for: '300ms' },
    ],
  });
  expect(stored.status, String(stored.error)).toBe('completed');

  await page.goto(`/#/runs/${id}`);
  await expect(page.getByTestId('run-page')).toBeVisible();
  for (const row of ['summary-publish', 'summary-e2e']) {
    for (const key of ['p95', 'p9999', 'worst10Mean']) {
      await expect(page.getByTestId(`${row}-${key}`)).toHaveText(TIME);
    }
  }
  await expect(page.getByTestId('summary')).toContainText('p99.99');
  await expect(page.getByTestId('summary')).toContainText('worst 10% mean');
  await expect(page.getByTestId('summary-produced-wire')).toHaveText(/^\d[\d.]* MB\/s$/);
  await expect(page.getByTestId('summary-client-cores')).toHaveText(
    /^\d+\.\d\d cores \(kbench process incl\. the bundled broker\)$/,
  );
  await expect(page.getByTestId('summary-client-producer')).toHaveText(/^\d+% busy$/);
  await expect(page.getByTestId('summary-client-consumer')).toHaveText(/^\d+% busy$/);
  // The whole machine: its busy cores, and the disk under the bundled cluster's data (or, on
  // tmpfs, none), each second on a chart of its own.
  await expect(page.getByTestId('summary-machine-cpu')).toHaveText(
    /^\d+% of its \d+ cores busy \(\d+\.\d\d cores of it outside kbench\)$/,
  );
  await expect(page.getByTestId('summary-machine-disk')).toHaveText(
    /^([\d,]+ MB on \w+, under the broker's data: \d+\.\d\dx the value bytes produced|– \(the broker's data is elsewhere, or on no single disk of this machine\))$/,
  );
  await expect(page.getByTestId('chart-machine-cpu')).toContainText('This machine: CPU busy');
  if (stored.summary?.machine?.disk)
    await expect(page.getByTestId('chart-machine-disk')).toContainText("This machine: the broker's disk");
  // The warning is there exactly when the stored figures say the client set the pace.
  const warning = clientPaceWarning(stored.summary?.client);
  if (warning) await expect(page.getByTestId('client-pace-warning')).toContainText(warning);
  else await expect(page.getByTestId('client-pace-warning')).toHaveCount(0);
  await expect(page.getByTestId('fault-row')).toHaveText([
    /^\d+\.\d s\s*command "echo e2e-marker": exit 0 after [\d.]+ s/,
    /^\d+\.\d s\s*pause node 2 for 300 ms\d/,
  ]);
  // What each fault cost (docs/scenarios.md#recovery-figures): a column per figure in the table...
  await expect(page.getByTestId('faults').locator('th')).toContainText([
    'without acks',
    'back after',
    'new leader',
  ]);
  await expect(page.getByTestId('fault-no-ack')).toHaveText([/^\d+\.\d s$/, /^\d+\.\d s$/]);
  await expect(page.getByTestId('fault-recovered')).toHaveText([
    /^(\d+\.\d s|not back)$/,
    /^(\d+\.\d s|not back)$/,
  ]);
  await expect(page.getByTestId('fault-leader')).toHaveText(['–', /^(–|\d+ ms)$/]);
  // ...and a red band on the time charts from each fault to its recovery (beside the grey warm-up).
  const band = '[fill="rgb(220,38,38)"][fill-opacity="0.1"]';
  await expect(page.getByTestId('chart-throughput').locator(band).first()).toBeVisible();
  await expect(page.getByTestId('chart-latency').locator(band).first()).toBeVisible();
  // The command's output is under its row, folded until opened.
  const output = page.getByTestId('fault-output');
  await output.locator('summary').click();
  await expect(output.locator('pre')).toHaveText('stdout:\ne2e-marker');
});

test('the run page warns when the stored run says the client set the pace', async ({ page }) => {
  // A run stored by another process (as `kbench run` stores one) into the history the server reads.
  const history = await History.open(join(process.env.KBENCH_E2E_HOME as string, 'history.duckdb'));
  const id = `pace${Date.now().toString(16)}`;
  const startedAt = new Date().toISOString();
  const latency = {
    count: 10,
    p50: 1,
    p75: 2,
    p95: 3,
    p99: 4,
    p999: 5,
    p9999: 6,
    max: 7,
    mean: 2,
    worst10Mean: 5,
  };
  await history.createRun({
    id,
    status: 'running',
    scenario: parseScenario({ name: 'client bound', duration: '3s' }),
    source: null,
    environment: {
      cores: 2,
      cpuModel: '',
      memoryBytes: 1024 ** 3,
      os: 'linux',
      hostname: 'e2e',
      versions: {},
      target: 'bundled',
      bootstrap: '127.0.0.1:9092',
      driver: 'kafkajs',
      clientProperties: { producers: { acks: '1', 'request.timeout.ms': '30000' } },
    },
    summary: null,
    error: null,
    startedAt,
    finishedAt: null,
    tags: [],
    notes: '',
  });
  await history.finishRun(id, {
    status: 'completed',
    summary: {
      measuredSeconds: 3,
      produced: { records: 3000, recordsPerSec: 1000, mbPerSec: 0.1, wireMbPerSec: 0.11, errors: 0 },
      consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
      publishLatencyMs: latency,
      endToEndLatencyMs: null,
      client: { cpuCores: 0.98, includesBroker: true, producerBusy: 0.97, consumerBusy: null },
    },
    error: null,
    finishedAt: startedAt,
  });

  await page.goto(`/#/runs/${id}`);
  await expect(page.getByTestId('client-pace-warning')).toContainText(
    'the client, not the target, set the pace (producer thread 97% busy)',
  );
  await expect(page.getByTestId('summary-client-producer')).toHaveText('97% busy');
  // The Kafka properties the producer's driver ran with, as the CLI's run header lists them.
  await expect(
    page.getByTestId('environment').getByRole('row', { name: /^Producer properties/ }),
  ).toContainText('acks=1 request.timeout.ms=30000');
});

test('a run that measured nothing shows as failed, with the reason, live and in the history', async ({
  page,
}) => {
  await page.goto('/');
  // Fifty records go out long before the 30 s warm-up ends.
  const [id] = await finishedRun(page, { name: 'all in warm-up', records: 50, warmup: '30s' });
  for (const path of [`/#/runs/${id}/live`, `/#/runs/${id}`]) {
    await page.goto(path);
    await expect(page.getByTestId('run-status')).toHaveText('failed');
    await expect(page.getByTestId('error')).toContainText('no measured sample: all 50 records were sent');
  }
});

test('a bundled run over SASL_SSL (cluster.security) shows its security, and no secret', async ({ page }) => {
  await page.goto('/');
  const [id, stored] = await finishedRun(page, {
    name: 'secured bundled',
    driver: 'native',
    records: 2000,
    producers: { count: 1, messageSize: 100 },
    cluster: { security: { tls: true, sasl: 'scram-sha-512' } },
  });
  expect(stored.status, String(stored.error)).toBe('completed');

  await page.goto(`/#/runs/${id}`);
  await expect(page.getByTestId('environment').getByRole('row', { name: /^Security/ })).toContainText(
    'SASL_SSL scram-sha-512',
  );
  const yaml = page.getByTestId('scenario-yaml');
  await expect(yaml).toContainText('security:');
  await expect(yaml).toContainText('sasl: scram-sha-512');
  await expect(page.getByTestId('run-page')).not.toContainText('PRIVATE KEY');
});

test('a run sampled every 200 ms shows its latency heatmaps, and offers its histograms for download', async ({
  page,
}) => {
  await page.goto('/');
  const [id, stored] = await finishedRun(page, {
    name: 'fine samples',
    duration: '3s',
    sampleIntervalMs: 200,
    producers: { count: 1, rate: 5000 },
    consumers: { count: 1 },
  });
  expect(stored.status, String(stored.error)).toBe('completed');

  await page.goto(`/#/runs/${id}`);
  for (const side of ['publish', 'e2e']) {
    const chart = page.getByTestId(`chart-heatmap-${side}`);
    await expect(chart).toBeVisible();
    // The heatmap's cells are drawn: far more shapes than axes and a title alone make.
    await expect.poll(async () => chart.locator('svg path').count()).toBeGreaterThan(20);
  }
  await expect(page.getByTestId('chart-heatmap-publish')).toContainText('Publish latency heatmap');
  // The time charts' x axis counts in fractions of a second at this interval.
  const samples = (await (await page.request.get(`/api/runs/${id}/samples`)).json()) as { t: number }[];
  expect(samples.length).toBeGreaterThanOrEqual(10);
  expect(samples.some((s) => !Number.isInteger(s.t))).toBe(true);

  const hlog = await page.request.get((await page.getByTestId('hlog-link').getAttribute('href')) ?? '');
  expect(hlog.status()).toBe(200);
  expect(await hlog.text()).toContain(
    '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
  );
  const json = await page.request.get(
    (await page.getByTestId('histograms-json-link').getAttribute('href')) ?? '',
  );
  expect(((await json.json()) as { samples: unknown[] }).samples.length).toBe(samples.length);
  const svg = await page.request.get(
    (await page.getByTestId('download-heatmap-publish-svg').getAttribute('href')) ?? '',
  );
  expect(svg.status()).toBe(200);
  expect(await svg.text()).toContain('>Publish latency heatmap</text>');
});
