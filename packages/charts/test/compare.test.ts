import type { LatencySummary, RunSummary, Sample } from '@kbench/schema';
import { describe, expect, it } from 'vitest';
import { compareCharts, percentileLadderChart, recordsPerSecChart, renderSvg } from '../src/index.js';

function latency(scale: number): LatencySummary {
  return {
    count: 100,
    p50: 1 * scale,
    p75: 2 * scale,
    p95: 3 * scale,
    p99: 4 * scale,
    p999: 5 * scale,
    p9999: 6 * scale,
    max: 7 * scale,
    mean: 1.5 * scale,
    worst10Mean: 4.5 * scale,
  };
}

function summary(rps: number, scale: number, e2e = false): RunSummary {
  return {
    measuredSeconds: 10,
    produced: {
      records: rps * 10,
      recordsPerSec: rps,
      mbPerSec: rps / 10_000,
      wireMbPerSec: null,
      errors: 0,
    },
    consumed: { records: 0, recordsPerSec: 0, mbPerSec: 0 },
    publishLatencyMs: latency(scale),
    endToEndLatencyMs: e2e ? latency(scale * 2) : null,
  };
}

function sample(t: number): Sample {
  return {
    t,
    intervalMs: 1000,
    warmup: false,
    producedRecords: 1000,
    producedBytes: 100_000,
    consumedRecords: 0,
    consumedBytes: 0,
    errors: 0,
    backlog: 0,
    publishP50Ms: 1,
    publishP99Ms: 4,
    publishMaxMs: 7,
    e2eP50Ms: null,
    e2eP99Ms: null,
    e2eMaxMs: null,
  };
}

const runs = [
  { label: 'acks=1', summary: summary(80_000, 1), samples: [sample(1), sample(2)] },
  { label: 'acks=all', summary: summary(40_000, 3), samples: [sample(1), sample(2)] },
];

describe('comparison charts', () => {
  it('draw the percentile ladder p50 .. max per run on a log axis', () => {
    const chart = percentileLadderChart(runs);
    const option = chart.option as {
      xAxis: { data: string[] };
      yAxis: { type: string };
      series: { name: string; data: (number | null)[] }[];
    };
    expect(option.xAxis.data).toEqual(['p50', 'p75', 'p95', 'p99', 'p99.9', 'p99.99', 'max']);
    expect(option.yAxis.type).toBe('log');
    expect(option.series.map((s) => s.name)).toEqual(['acks=1', 'acks=all']);
    expect(option.series[1]?.data).toEqual([3, 6, 9, 12, 15, 18, 21]);
  });

  it('draw one bar per run for records/s, with the unit on the axis', () => {
    const option = recordsPerSecChart(runs).option as {
      yAxis: { name: string };
      series: { data: { value: number }[] }[];
    };
    expect(option.yAxis.name).toBe('rec/s');
    expect(option.series[0]?.data.map((d) => d.value)).toEqual([80_000, 40_000]);
  });

  it('include the end-to-end ladder only when a run measured it', () => {
    expect(compareCharts(runs).map((c) => c.id)).not.toContain('e2e-percentiles');
    const withE2e = [{ ...runs[0]!, summary: summary(1, 1, true) }, runs[1]!];
    expect(compareCharts(withE2e).map((c) => c.id)).toContain('e2e-percentiles');
  });

  it('render to SVG on the server with bars and lines', () => {
    for (const chart of compareCharts(runs)) {
      const svg = renderSvg(chart.option);
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg).toContain(chart.title.replace('&', '&amp;').split(' ')[0]);
    }
  });

  it('show a run without a summary as zero rather than failing', () => {
    const option = recordsPerSecChart([{ label: 'failed', summary: null, samples: [] }]).option as {
      series: { data: { value: number }[] }[];
    };
    expect(option.series[0]?.data[0]?.value).toBe(0);
  });
});

describe('the knob curve', () => {
  it('is drawn when the runs differ in exactly one setting, against its values', async () => {
    const { parseScenario } = await import('@kbench/schema');
    const withScenarios = runs.map((r, i) => ({
      ...r,
      scenario: parseScenario({ producers: { messageSize: [10, 1000][i] } }),
    }));
    const charts = compareCharts(withScenarios);
    expect(charts[0]?.id).toBe('knob-curve');
    const option = charts[0]?.option as {
      xAxis: { name: string; data: string[] };
      series: { data: unknown[] }[];
    };
    expect(option.xAxis).toMatchObject({ name: 'producers.messageSize', data: ['10', '1000'] });
    expect(option.series[0]?.data).toEqual([80_000, 40_000]);
  });

  it('is left out when the runs differ in more than one setting', async () => {
    const { parseScenario } = await import('@kbench/schema');
    const withScenarios = runs.map((r, i) => ({
      ...r,
      scenario: parseScenario({ producers: { count: i + 1, acks: i } }),
    }));
    expect(compareCharts(withScenarios).map((c) => c.id)).not.toContain('knob-curve');
  });
});

describe('stored runs compared', () => {
  it("are labelled by the part of their names that differs, and a sweep's runs get their curve", async () => {
    const { parseScenario } = await import('@kbench/schema');
    const { comparedRuns } = await import('../src/index.js');
    const stored = [100, 1000].map((size, i) => ({
      id: `run${i}0000000`,
      scenario: {
        ...parseScenario({ producers: { messageSize: size } }),
        name: `a scenario with a name much longer than forty characters [producers.messageSize=${size}]`,
      },
      summary: runs[i]?.summary ?? null,
    }));
    const compared = comparedRuns(stored, [[], []]);
    expect(compared.map((r) => r.label)).toEqual([
      'run000 a…[producers.messageSize=100]',
      'run100 a…[producers.messageSize=1000]',
    ]);
    expect(compareCharts(compared)[0]?.id).toBe('knob-curve');
  });
});

describe('fault markers', () => {
  it('mark each fault of the timeline on the time charts', async () => {
    const { runCharts } = await import('../src/index.js');
    const throughput = runCharts(runs[0]!.samples, 'run', [{ t: 2, label: 'kill node 2' }])[0]!;
    const series = (
      throughput.option as { series: { markLine?: { data: { name: string; xAxis: number }[] } }[] }
    ).series;
    expect(series[0]?.markLine?.data).toEqual([{ name: 'kill node 2', xAxis: 2 }]);
  });

  it("mark each compared run's faults on the comparison's time charts, naming the run", async () => {
    const { comparedRuns } = await import('../src/index.js');
    const { parseScenario } = await import('@kbench/schema');
    const stored = ['a', 'b'].map((name, i) => ({
      id: `run${i}0000000`,
      scenario: parseScenario({
        name,
        cluster: { nodes: 2 },
        topics: { replicationFactor: 2 },
        faults: i === 0 ? [{ at: '2s', action: 'kill', node: 2 }] : [],
      }),
      summary: runs[i]?.summary ?? null,
    }));
    const compared = comparedRuns(stored, [runs[0]!.samples, runs[1]!.samples]);
    const throughput = compareCharts(compared).find((c) => c.id === 'throughput')!;
    const marked = (
      throughput.option as {
        series: { name: string; markLine?: { data: { name: string; xAxis: number }[] } }[];
      }
    ).series.flatMap((s) => s.markLine?.data ?? []);
    expect(marked).toEqual([{ name: `${compared[0]!.label}: kill node 2`, xAxis: 2 }]);
  });
});
