import type { RunSummary } from '@kbench/schema';
import { cleanup, render, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { SummaryTable } from '../src/components/SummaryTable';

const latency = (p50: number, p99: number, p999: number, max: number) => ({
  count: 1000,
  p50,
  p75: p50,
  p95: p99,
  p99,
  p999,
  p9999: max,
  max,
  mean: p50,
  worst10Mean: p99,
});

const summary: RunSummary = {
  measuredSeconds: 50,
  produced: { records: 41_234_567, recordsPerSec: 824_691.3, mbPerSec: 78.65, wireMbPerSec: 80.1, errors: 0 },
  consumed: { records: 41_000_000, recordsPerSec: 820_000, mbPerSec: 78.2 },
  publishLatencyMs: latency(1.234, 12.5, 48.0, 1520),
  endToEndLatencyMs: null,
};

afterEach(cleanup);

describe('SummaryTable', () => {
  it('shows throughput with its units', () => {
    const { getByTestId } = render(<SummaryTable summary={summary} />);
    const produced = getByTestId('summary-produced');
    expect(within(produced).getByText('825 k rec/s')).toBeTruthy();
    expect(within(produced).getByText('78.7 MB/s')).toBeTruthy();
    expect(within(produced).getByText('41,234,567')).toBeTruthy();
  });

  it('shows publish latency percentiles in ms and s', () => {
    const row = render(<SummaryTable summary={summary} />).getByTestId('summary-publish');
    const cells = within(row)
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells).toEqual(['1.23 ms', '12.5 ms', '48.0 ms', '1.52 s']);
  });

  it('shows a dash where a run has no end-to-end latency', () => {
    const row = render(<SummaryTable summary={summary} />).getByTestId('summary-e2e');
    expect(
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['–', '–', '–', '–']);
  });
});
