import type { AgentBreakdown, AgentsRun } from '@kbench/schema';
import { cleanup, render, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentsTable } from '../src/components/AgentsTable';

const side = (records: number, p99: number | null) => ({
  records,
  valueBytes: records * 100,
  recordsPerSec: records / 10,
  errors: 0,
  latencyMs: p99 === null ? null : { p50: p99 / 2, p99, p999: p99 * 2, max: p99 * 3 },
  histogram: { buckets: [], counts: [], count: records, sum: 0, max: 0 },
});

const agent = (over: Partial<AgentBreakdown>): AgentBreakdown => ({
  name: 'a',
  address: '10.0.0.1:7755',
  host: 'load-1',
  cores: 8,
  kbench: '0.1.0',
  roles: ['producers', 'consumers'],
  producers: 2,
  consumers: 0,
  clockOffsetMs: 500.2,
  clockUncertaintyMs: 0.12,
  lostAtMs: null,
  lostReason: null,
  produced: side(120_000, 4.5),
  consumed: side(0, null),
  ...over,
});

const run: AgentsRun = {
  agents: [
    agent({}),
    agent({
      name: 'b',
      address: '10.0.0.2:7755',
      host: 'load-2',
      producers: 0,
      consumers: 2,
      clockOffsetMs: -0.3,
      clockUncertaintyMs: 0.2,
      lostAtMs: 3200,
      lostReason: 'connection closed',
      produced: side(0, null),
      consumed: side(90_000, 12.5),
    }),
  ],
  e2eClockUncertaintyMs: 0.32,
  onLoss: 'continue',
};

afterEach(cleanup);

describe('AgentsTable', () => {
  it('lists each agent with its share, clock and figures, and the end-to-end clock uncertainty', () => {
    const { getAllByTestId, getByTestId } = render(<AgentsTable agents={run} />);
    const [a, b] = getAllByTestId('agent-row');
    expect(within(a!).getByText('500.2 ms ± 0.12 ms')).toBeTruthy();
    expect(within(a!).getByText('120,000 · 12.0 k rec/s')).toBeTruthy();
    expect(within(a!).getByText('4.50 ms')).toBeTruthy();
    expect(within(b!).getByText('90,000 · 9,000 rec/s')).toBeTruthy();
    expect(within(b!).getByText('at 3.2 s: connection closed')).toBeTruthy();
    expect(getByTestId('agents-e2e-uncertainty').textContent).toBe('0.32 ms');
    expect(getByTestId('agents-loss-warning').textContent).toMatch(
      /^Warning: lost an agent during the run and went on without it \(b \(10\.0\.0\.2:7755\) at 3\.2 s: connection closed\)/,
    );
  });
});
