// The run page of a run whose load came from agents: the per-agent table (share, clock offset and
// uncertainty, figures, loss) and the end-to-end clock uncertainty, as stored by `kbench run --agents`
// into the history the server reads, through the API's generated schemas.
import { join } from 'node:path';
import { History } from '@kbench/history';
import { type AgentBreakdown, type AgentsRun, agentLossWarning, parseScenario } from '@kbench/schema';
import { expect, test } from '@playwright/test';

const histogram = { buckets: [1000], counts: [10], count: 10, sum: 10_000, max: 1000 };
const side = (records: number, p99: number) => ({
  records,
  valueBytes: records * 100,
  recordsPerSec: records / 3,
  errors: 0,
  latencyMs: { p50: p99 / 2, p99, p999: p99, max: p99 },
  histogram,
});
const none = {
  ...side(0, 0),
  latencyMs: null,
  histogram: { buckets: [], counts: [], count: 0, sum: 0, max: 0 },
};

test('the run page lists each agent of a run and the end-to-end clock uncertainty', async ({ page }) => {
  const history = await History.open(join(process.env.KBENCH_E2E_HOME as string, 'history.duckdb'));
  const id = `agents${Date.now().toString(16)}`;
  const startedAt = new Date().toISOString();
  const agent = (over: Partial<AgentBreakdown>): AgentBreakdown => ({
    name: 'load-1',
    address: '10.0.0.11:7755',
    host: 'load-1.example',
    cores: 16,
    kbench: '0.1.0',
    roles: ['producers'],
    producers: 3,
    consumers: 0,
    clockOffsetMs: 500.4,
    clockUncertaintyMs: 0.15,
    lostAtMs: null,
    lostReason: null,
    produced: side(30_000, 4),
    consumed: none,
    ...over,
  });
  const agents: AgentsRun = {
    agents: [
      agent({}),
      agent({
        name: 'load-2',
        address: '10.0.0.12:7755',
        host: 'load-2.example',
        roles: ['consumers'],
        producers: 0,
        consumers: 2,
        clockOffsetMs: -1.2,
        clockUncertaintyMs: 0.25,
        lostAtMs: 2100,
        lostReason: 'connection closed',
        produced: none,
        consumed: side(20_000, 9),
      }),
    ],
    e2eClockUncertaintyMs: 0.4,
    onLoss: 'continue',
  };
  const environment = {
    cores: 2,
    cpuModel: '',
    memoryBytes: 1024 ** 3,
    os: 'linux',
    hostname: 'controller',
    versions: {},
    target: 'external',
    bootstrap: '10.0.0.1:9092',
    driver: 'native',
  };
  await history.createRun({
    id,
    status: 'running',
    scenario: parseScenario({ name: 'from agents', driver: 'native', duration: '3s' }),
    source: null,
    environment,
    summary: null,
    error: null,
    startedAt,
    finishedAt: null,
    tags: [],
    notes: '',
  });
  await history.finishRun(id, {
    status: 'completed',
    summary: null,
    error: null,
    finishedAt: startedAt,
    environment: { ...environment, agents },
  });

  // The API hands the breakdown over whole.
  const stored = (await (await page.request.get(`/api/runs/${id}`)).json()) as {
    environment: { agents?: AgentsRun };
  };
  expect(stored.environment.agents).toEqual(agents);

  await page.goto(`/#/runs/${id}`);
  const rows = page.getByTestId('agent-row');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toContainText('load-1');
  await expect(rows.nth(0)).toContainText('500.4 ms ± 0.15 ms');
  await expect(rows.nth(0)).toContainText('30,000 · 10.0 k rec/s');
  await expect(rows.nth(1)).toContainText('at 2.1 s: connection closed');
  await expect(page.getByTestId('agents-e2e-uncertainty')).toHaveText('0.40 ms');
  await expect(page.getByTestId('agents-loss-warning')).toContainText(agentLossWarning(agents) as string);
});
