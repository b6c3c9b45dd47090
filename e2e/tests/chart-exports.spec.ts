/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Charts that say what the page says (issue 14, item 3): the SVG and PNG a person downloads from a run
// page carry the run's fault markers, name and id; a PNG's y-axis labels are whole however large the
// rates; the HTML comparison report's legends neither overlap nor page.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { History } from '@kbench/history';
import { parseScenario, type Sample } from '@kbench/schema';
import { type Download, expect, type Page, test } from '@playwright/test';

/** Starts a run through the API, as the Run button does, and waits until it has finished. */
async function finishedRun(page: Page, scenario: Record<string, unknown>): Promise<string> {
  const res = await page.request.post('/api/runs', { data: { scenario } });
  expect(res.status()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await expect
    .poll(
      async () => ((await (await page.request.get(`/api/runs/${id}`)).json()) as { status: string }).status,
      {
        timeout: 90_000,
      },
    )
    .toBe('completed');
  return id;
}

/** Ten one-second samples at `perSecond` records/s, produced and consumed. */
function steadySamples(perSecond: number): Sample[] {
  return Array.from({ length: 10 }, (_, i) => ({
    t: i + 1,
    intervalMs: 1000,
    warmup: i < 2,
    producedRecords: perSecond + i * 1000,
    producedBytes: perSecond * 100,
    consumedRecords: perSecond - 5000,
    consumedBytes: perSecond * 100,
    errors: 0,
    backlog: 5000,
    publishP50Ms: 1.5,
    publishP99Ms: 8,
    publishMaxMs: 30,
    e2eP50Ms: 3,
    e2eP99Ms: 12,
    e2eMaxMs: 40,
  }));
}

/** A finished run stored by another process (as `kbench run` stores one) into the history the server reads. */
async function storedRun(id: string, name: string, samples: Sample[], size?: number): Promise<void> {
  const history = await History.open(join(process.env.KBENCH_E2E_HOME as string, 'history.duckdb'));
  const at = new Date().toISOString();
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
    scenario: parseScenario({ name, duration: '10s', producers: { messageSize: size ?? 100 } }),
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
      driver: 'native',
    },
    summary: null,
    error: null,
    startedAt: at,
    finishedAt: null,
    tags: [],
    notes: '',
  });
  await history.appendSamples(id, samples);
  const rate = samples[5]?.producedRecords ?? 0;
  await history.finishRun(id, {
    status: 'completed',
    summary: {
      measuredSeconds: 8,
      produced: { records: rate * 8, recordsPerSec: rate, mbPerSec: 1, wireMbPerSec: 1.1, errors: 0 },
      consumed: { records: rate * 8, recordsPerSec: rate, mbPerSec: 1 },
      publishLatencyMs: latency,
      endToEndLatencyMs: latency,
    },
    error: null,
    finishedAt: at,
  });
}

async function downloaded(page: Page, testId: string): Promise<{ file: Download; bytes: Buffer }> {
  const download = page.waitForEvent('download');
  await page.getByTestId(testId).click();
  const file = await download;
  return { file, bytes: await readFile((await file.path()) as string) };
}

interface PngFigures {
  width: number;
  height: number;
  /** The leftmost and rightmost columns with any ink (a pixel clearly darker than the white background). */
  firstInkColumn: number;
  lastInkColumn: number;
  /** Pixels of the fault markers' red (#dc2626). */
  faultRed: number;
}

/** Decodes a PNG in Chromium, as an image viewer would show it, and measures it. */
async function pngFigures(page: Page, png: Buffer): Promise<PngFigures> {
  return page.evaluate(
    async (src) => {
      const image = new Image();
      image.src = src;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.naturalWidth;
      canvas.height = image.naturalHeight;
      const context = canvas.getContext('2d') as CanvasRenderingContext2D;
      context.drawImage(image, 0, 0);
      const { data, width, height } = context.getImageData(0, 0, canvas.width, canvas.height);
      let firstInkColumn = width;
      let lastInkColumn = -1;
      let faultRed = 0;
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          const i = (y * width + x) * 4;
          const [r, g, b] = [data[i] as number, data[i + 1] as number, data[i + 2] as number];
          if (Math.min(r, g, b) < 200) {
            firstInkColumn = Math.min(firstInkColumn, x);
            lastInkColumn = Math.max(lastInkColumn, x);
          }
          if (r > 180 && g < 70 && b < 70) faultRed++;
        }
      }
      return { width, height, firstInkColumn, lastInkColumn, faultRed };
    },
    `data:image/png;base64,${png.toString('base64')}`,
  );
}

test('the SVG and PNG a run page exports carry the fault markers the page shows', async ({ page }) => {
  await page.goto('/');
  const id = await finishedRun(page, {
    name: 'paused follower',
    driver: 'kafkajs',
    duration: '4s',
    warmup: '1s',
    cluster: { nodes: 2 },
    topics: { partitions: 2, replicationFactor: 2 },
    producers: { count: 1 },
    faults: [{ at: '2s', action: 'pause', node: 2, for: '300ms' }],
  });
  await page.goto(`/#/runs/${id}`);
  const onPage = page.getByTestId('chart-throughput').locator('svg text', { hasText: 'pause node 2' });
  await expect(onPage).toHaveCount(1);
  const marker = (await onPage.textContent()) as string;

  const svg = (await downloaded(page, 'download-throughput-svg')).bytes.toString('utf8');
  expect(svg).toContain(`>${marker}</text>`);
  const png = await downloaded(page, 'download-throughput-png');
  expect(png.file.suggestedFilename()).toBe(`kbench-${id}-throughput.png`);
  expect((await pngFigures(page, png.bytes)).faultRed).toBeGreaterThan(100);
});

test("a run page's charts and the SVG it exports carry the run's name and id", async ({ page }) => {
  const id = `named${Date.now().toString(16)}`;
  await storedRun(id, 'a run with a name', steadySamples(50_000));
  await page.goto(`/#/runs/${id}`);
  const identity = `a run with a name (${id})`;
  for (const chart of ['throughput', 'bandwidth', 'latency', 'backlog'])
    await expect(page.getByTestId(`chart-${chart}`).locator('svg text', { hasText: identity })).toHaveCount(
      1,
    );
  const svg = (await downloaded(page, 'download-latency-svg')).bytes.toString('utf8');
  expect(svg).toContain(`>${identity}</text>`);
});

test("a live run's charts carry the run's name and id", async ({ page }) => {
  const id = `livenamed${Date.now().toString(16)}`;
  await storedRun(id, 'a live run with a name', steadySamples(50_000));
  await page.goto(`/#/runs/${id}/live`);
  await expect(
    page.getByTestId('chart-throughput').locator('svg text', { hasText: `a live run with a name (${id})` }),
  ).toHaveCount(1);
});

test("an exported SVG's labels lie wholly inside the picture at millions of records/s", async ({ page }) => {
  const id = `megasvg${Date.now().toString(16)}`;
  await storedRun(id, 'twelve million a second', steadySamples(12_000_000));
  await page.goto(`/#/runs/${id}`);
  await expect(
    page.getByTestId('chart-throughput').locator('svg text', { hasText: /^12,000,000$/ }),
  ).toHaveCount(1);

  const svg = (await downloaded(page, 'download-throughput-svg')).bytes.toString('utf8');
  // Drawn by Chromium as a person opening the file sees it.
  await page.setContent(`<body style="margin:0">${svg}</body>`);
  await expect(page.locator('svg text', { hasText: /^12,000,000$/ })).toHaveCount(1);
  const outside = await page.evaluate(() => {
    const picture = (document.querySelector('svg') as SVGSVGElement).getBoundingClientRect();
    return [...document.querySelectorAll('svg text')]
      .filter((t) => {
        const box = t.getBoundingClientRect();
        return box.left < picture.left || box.right > picture.right || box.top < picture.top;
      })
      .map((t) => t.textContent);
  });
  expect(outside).toEqual([]);
});

test("an exported PNG's y-axis labels are whole at millions of records/s", async ({ page }) => {
  const id = `megapng${Date.now().toString(16)}`;
  await storedRun(id, 'twelve million a second', steadySamples(12_000_000));
  await page.goto(`/#/runs/${id}`);
  await expect(
    page.getByTestId('chart-throughput').locator('svg text', { hasText: /^12,000,000$/ }),
  ).toHaveCount(1);

  const png = await pngFigures(page, (await downloaded(page, 'download-throughput-png')).bytes);
  // The labels are the leftmost ink, and none of them touches the picture's edges.
  expect(png.firstInkColumn).toBeLessThan(png.width * 0.1);
  expect(png.firstInkColumn).toBeGreaterThanOrEqual(4);
  expect(png.lastInkColumn).toBeLessThan(png.width - 4);
});

test("the HTML comparison report's legends neither overlap nor page", async ({ page }) => {
  const stamp = Date.now().toString(16);
  // Ids that differ in their first characters, as generated ones do (the legend names runs by a prefix).
  const ids = [10, 100, 1000, 10_000, 100_000].map((_, i) => `r${i}${stamp}`);
  for (const [i, id] of ids.entries()) {
    const size = [10, 100, 1000, 10_000, 100_000][i];
    await storedRun(
      id,
      `kreps-2014 single producer, no replication, ${size} byte messages`,
      steadySamples(400_000 * (i + 1)),
      size,
    );
  }
  await page.goto(`/#/compare/${ids.join(',')}`);
  const report = await downloaded(page, 'compare-report');
  await page.setContent(report.bytes.toString('utf8'));

  const figures = await page.evaluate(() =>
    [...document.querySelectorAll('figure')].map((figure) => {
      const svg = figure.querySelector('svg') as SVGSVGElement;
      const picture = svg.getBoundingClientRect();
      // ECharts marks each legend entry's hit area; the entry's text is drawn at the same place.
      const entryAt = new Set(
        [...svg.querySelectorAll('[ecmeta_ssr_type="legend"]')].map((p) => p.getAttribute('transform')),
      );
      const texts = [...svg.querySelectorAll('text')];
      const legend = texts.filter((t) => entryAt.has(t.getAttribute('transform')));
      const overlaps: string[] = [];
      for (const entry of legend) {
        const a = entry.getBoundingClientRect();
        for (const other of texts) {
          if (other === entry) continue;
          const b = other.getBoundingClientRect();
          if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
            overlaps.push(`${entry.textContent} / ${other.textContent}`);
        }
      }
      return {
        title: figure.querySelector('figcaption')?.textContent ?? '',
        entries: legend.length,
        overlaps,
        outside: legend
          .filter((t) => {
            const box = t.getBoundingClientRect();
            return box.left < picture.left || box.right > picture.right;
          })
          .map((t) => t.textContent),
        pagers: texts.map((t) => t.textContent ?? '').filter((text) => /^\d+\/\d+$/.test(text)),
      };
    }),
  );
  for (const figure of figures) {
    expect(figure.pagers, figure.title).toEqual([]);
    expect(figure.overlaps, figure.title).toEqual([]);
    expect(figure.outside, figure.title).toEqual([]);
  }
  // Five runs, each produced and consumed: the throughput legend has ten entries, all of them shown.
  expect(figures.find((f) => f.title === 'Throughput')?.entries).toBe(10);
});
