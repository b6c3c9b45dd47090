// GET /metrics on a real server: the answer parses as Prometheus text, and while a real run goes on
// the bundled broker it shows that run's figures under its id.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderExposition } from '../src/prometheus.js';
import { type RunningServer, startServer } from '../src/server.js';
import { makeWorkspace, type Workspace } from './fixtures.js';
import { parseExposition, type Samples } from './prometheus-text.js';

let ws: Workspace;
let server: RunningServer;

beforeAll(async () => {
  ws = await makeWorkspace();
  server = await startServer({
    history: ws.history,
    scenariosDir: ws.scenariosDir,
    profilesDir: join(ws.dir, 'profiles'),
    port: 0,
  });
});

afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

async function scrape(): Promise<Samples> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await res.text());
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('GET /metrics', () => {
  it('parses as Prometheus text and shows no run, the history size and the process figures when idle', async () => {
    const samples = await scrape();
    expect(samples.get('kbench_runs_in_progress')).toBe(0);
    expect(samples.get('kbench_history_bytes')).toBeGreaterThan(0);
    expect(samples.get('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(samples.get('process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it("shows a real run's figures under its id while it goes", async () => {
    const start = await fetch(`${server.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({ path: 'quickstart.yaml', set: ['duration=120s'] }),
    });
    expect(start.status).toBe(201);
    const { id } = (await start.json()) as { id: string };
    const run = server.app.runs.get(id)!;
    // Scrapes until the run has measured an interval (its first sample), as Prometheus would.
    let samples = await scrape();
    while (!samples.has(`kbench_run_produced_records_per_second{run_id="${id}"}`)) {
      await sleep(250);
      samples = await scrape();
    }
    expect(samples.get('kbench_runs_in_progress')).toBe(1);
    expect(samples.get(`kbench_run_info{run_id="${id}",scenario="quick start"}`)).toBe(1);
    expect(samples.get(`kbench_run_produced_records_per_second{run_id="${id}"}`)).toBeGreaterThan(0);
    expect(samples.get(`kbench_run_produced_bytes_per_second{run_id="${id}"}`)).toBeGreaterThan(0);
    expect(samples.get(`kbench_run_produced_records_total{run_id="${id}"}`)).toBeGreaterThan(0);
    expect(samples.get(`kbench_run_errors_total{run_id="${id}"}`)).toBe(0);
    expect(samples.has(`kbench_run_publish_latency_p99_seconds{run_id="${id}"}`)).toBe(true);
    expect(samples.has(`kbench_run_consumed_records_per_second{run_id="${id}"}`)).toBe(true);

    run.stop();
    await run.done;
    const after = await scrape();
    expect(after.get('kbench_runs_in_progress')).toBe(0);
    expect([...after.keys()].some((k) => k.includes(id))).toBe(false);
  }, 120_000);

  it('escapes label values and refuses a counter without _total', () => {
    const text = renderExposition([
      {
        name: 'x_info',
        type: 'gauge',
        help: 'a\nb',
        series: [{ labels: { scenario: 'say "hi"\\\n' }, value: 1 }],
      },
    ]);
    expect(parseExposition(text).get('x_info{scenario="say \\"hi\\"\\\\\\n"}')).toBe(1);
    expect(() => renderExposition([{ name: 'x', type: 'counter', help: '', series: [] }])).toThrow(/_total/);
  });
});
