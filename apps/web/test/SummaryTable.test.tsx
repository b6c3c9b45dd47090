import type { RunSummary } from '@kbench/schema';
import { cleanup, render, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultsTable } from '../src/components/FaultsTable';
import { SummaryTable } from '../src/components/SummaryTable';

const latency = (p50: number, p95: number, p99: number, p999: number, p9999: number, max: number) => ({
  count: 1000,
  p50,
  p75: p50,
  p95,
  p99,
  p999,
  p9999,
  max,
  mean: p50,
  worst10Mean: 20.25,
});

const summary: RunSummary = {
  measuredSeconds: 50,
  produced: { records: 41_234_567, recordsPerSec: 824_691.3, mbPerSec: 78.65, wireMbPerSec: 80.1, errors: 0 },
  consumed: { records: 41_000_000, recordsPerSec: 820_000, mbPerSec: 78.2 },
  publishLatencyMs: latency(1.234, 8.5, 12.5, 48.0, 97.7, 1520),
  endToEndLatencyMs: null,
  client: { cpuCores: 1.234, includesBroker: true, producerBusy: 0.42, consumerBusy: null },
};

afterEach(cleanup);

describe('SummaryTable', () => {
  it('shows throughput with its units, and the bytes on the wire', () => {
    const { getByTestId } = render(<SummaryTable summary={summary} />);
    const produced = getByTestId('summary-produced');
    expect(within(produced).getByText('825 k rec/s')).toBeTruthy();
    expect(within(produced).getByText('78.7 MB/s')).toBeTruthy();
    expect(within(produced).getByText('41,234,567')).toBeTruthy();
    expect(getByTestId('summary-produced-wire').textContent).toBe('80.1 MB/s');
  });

  it('shows the publish latency percentiles the CLI prints, in ms and s', () => {
    const row = render(<SummaryTable summary={summary} />).getByTestId('summary-publish');
    const cells = within(row)
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells).toEqual(['1.23 ms', '8.50 ms', '12.5 ms', '48.0 ms', '97.7 ms', '1.52 s', '20.3 ms']);
  });

  it('shows a dash where a run has no end-to-end latency', () => {
    const row = render(<SummaryTable summary={summary} />).getByTestId('summary-e2e');
    expect(
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['–', '–', '–', '–', '–', '–', '–']);
  });

  it('shows how hard the load generator worked, without a warning when it had time to spare', () => {
    const { getByTestId, queryByTestId } = render(<SummaryTable summary={summary} />);
    expect(getByTestId('summary-client-cores').textContent).toBe(
      '1.23 cores (kbench process incl. the bundled broker)',
    );
    expect(getByTestId('summary-client-producer').textContent).toBe('42% busy');
    expect(getByTestId('summary-client-consumer').textContent).toBe('–');
    expect(queryByTestId('client-pace-warning')).toBeNull();
  });

  it("shows the machine's CPU and the data disk's writes against the bytes produced", () => {
    // 78.65 MB/s for 50 s is 3,932.5 MB of values; the disk wrote twice that.
    const machine = { cpuBusy: 0.876, cores: 2, disk: 'vda', diskWrittenBytes: 2 * 78.65 * 50 * 1024 * 1024 };
    const { getByTestId } = render(<SummaryTable summary={{ ...summary, machine }} />);
    expect(getByTestId('summary-machine-cpu').textContent).toBe('88% of its 2 cores busy');
    expect(getByTestId('summary-machine-disk').textContent).toBe(
      "7,865 MB on vda, under the broker's data: 2.00x the value bytes produced",
    );
  });

  it('says when there is no disk figure, and shows nothing for older runs', () => {
    const machine = { cpuBusy: 0.5, cores: 2, disk: null, diskWrittenBytes: null };
    const { getByTestId } = render(<SummaryTable summary={{ ...summary, machine }} />);
    expect(getByTestId('summary-machine-disk').textContent).toBe(
      "– (the broker's data is elsewhere, or on no single disk of this machine)",
    );
    cleanup();
    expect(render(<SummaryTable summary={summary} />).queryByTestId('summary-machine')).toBeNull();
  });

  it('says how many cores were busy outside kbench, and warns when that was something else of weight', () => {
    const quiet = { cpuBusy: 0.6, cores: 2, disk: 'vda', diskWrittenBytes: 0, othersCores: 0.04 };
    const first = render(<SummaryTable summary={{ ...summary, machine: quiet }} />);
    expect(first.getByTestId('summary-machine-cpu').textContent).toBe(
      '60% of its 2 cores busy (0.04 cores of it outside kbench)',
    );
    expect(first.queryByTestId('machine-share-warning')).toBeNull();
    cleanup();
    const shared = { ...quiet, cpuBusy: 0.95, othersCores: 0.93 };
    const warning = render(<SummaryTable summary={{ ...summary, machine: shared }} />).getByTestId(
      'machine-share-warning',
    );
    expect(warning.textContent).toContain(
      "something besides this run kept 0.9 of this machine's 2 cores busy on average while it was measured",
    );
  });

  it('warns when the client, not the target, set the pace', () => {
    const busy = { ...summary, client: { ...summary.client!, producerBusy: 0.98 } };
    const warning = render(<SummaryTable summary={busy} />).getByTestId('client-pace-warning');
    expect(warning.textContent).toContain(
      'the client, not the target, set the pace (producer thread 98% busy)',
    );
  });
});

describe('FaultsTable', () => {
  it('lists each executed fault at its time', () => {
    const { getAllByTestId } = render(
      <FaultsTable
        faults={[
          { t: 1.5, action: 'pause', target: 2, node: 2, durationMs: 300, error: null },
          {
            t: 3,
            action: 'kill',
            target: 'leader:t-0',
            node: null,
            durationMs: null,
            error: 'no such topic',
          },
        ]}
      />,
    );
    expect(getAllByTestId('fault-row').map((r) => r.textContent)).toEqual([
      '1.5 spause node 2 for 300 ms',
      '3.0 skill leader:t-0: failed, no such topic',
    ]);
  });
});
