import type { LineSeriesOption } from 'echarts';
import { describe, expect, it } from 'vitest';
import {
  backlogChart,
  bandwidthChart,
  type ChartSpec,
  latencyChart,
  PALETTE,
  runCharts,
  throughputChart,
} from '../src/index.js';
import { samples } from './fixtures.js';

function seriesOf(spec: ChartSpec): LineSeriesOption[] {
  return spec.option.series as LineSeriesOption[];
}

function axisName(spec: ChartSpec, axis: 'xAxis' | 'yAxis'): unknown {
  return (spec.option[axis] as { name?: string }).name;
}

describe('throughputChart', () => {
  it('draws produced and consumed records/s for one run, unprefixed', () => {
    const spec = throughputChart([{ label: 'r1', samples: samples(10) }]);
    expect(seriesOf(spec).map((s) => s.name)).toEqual(['produced', 'consumed']);
    expect(seriesOf(spec)[0]?.data?.[0]).toEqual([1, 50_000]);
  });

  it('prefixes series with the run label when comparing runs', () => {
    const spec = throughputChart([
      { label: 'a', samples: samples(5) },
      { label: 'b', samples: samples(5) },
    ]);
    expect(seriesOf(spec).map((s) => s.name)).toEqual([
      'a: produced',
      'a: consumed',
      'b: produced',
      'b: consumed',
    ]);
    expect(seriesOf(spec).map((s) => s.color)).toEqual([PALETTE[0], PALETTE[0], PALETTE[1], PALETTE[1]]);
  });

  it('scales counts to per-second rates by the interval length', () => {
    const spec = throughputChart([
      { label: 'r', samples: samples(1, 0, { intervalMs: 500, producedRecords: 10 }) },
    ]);
    expect(seriesOf(spec)[0]?.data?.[0]).toEqual([1, 20]);
  });

  it('leaves out consumed for a run without consumers', () => {
    const spec = throughputChart([{ label: 'r', samples: samples(5, 0, { consumedRecords: 0 }) }]);
    expect(seriesOf(spec).map((s) => s.name)).toEqual(['produced']);
  });

  it('shades the warm-up seconds when there are warm-up samples', () => {
    const spec = throughputChart([{ label: 'r', samples: samples(10, 3) }]);
    expect(seriesOf(spec)[0]?.markArea?.data).toEqual([[{ name: 'warm-up', xAxis: 0 }, { xAxis: 3 }]]);
  });

  it('has no warm-up area without warm-up samples', () => {
    const spec = throughputChart([{ label: 'r', samples: samples(10, 0) }]);
    expect(seriesOf(spec).some((s) => s.markArea !== undefined)).toBe(false);
  });
});

describe('units and axes', () => {
  it('names every axis with its unit', () => {
    const specs = runCharts(samples(5));
    expect(specs.map((s) => axisName(s, 'xAxis'))).toEqual(['time (s)', 'time (s)', 'time (s)', 'time (s)']);
    expect(specs.map((s) => axisName(s, 'yAxis'))).toEqual(['rec/s', 'MiB/s', 'ms', 'records']);
  });

  it("adds the broker nodes' traffic and health for runs on the bundled broker, one line per node and figure", () => {
    const node = (id: number, mib: number) => ({
      node: id,
      bytesInPerSec: mib * 1024 * 1024,
      bytesOutPerSec: 0,
      replicatedBytesPerSec: 1024 * 1024,
      fsyncs: 3,
      underReplicated: id === 2 ? 1 : 0,
      logSizeBytes: 0,
    });
    const specs = runCharts(samples(3, 0, { broker: [node(1, 2), node(2, 4)] }));
    expect(specs.map((s) => s.id)).toEqual([
      'throughput',
      'bandwidth',
      'latency',
      'backlog',
      'broker-traffic',
      'broker-health',
    ]);
    const traffic = seriesOf(specs[4]!);
    expect(traffic.map((s) => s.name)).toEqual([
      'node 1 in',
      'node 1 replicated',
      'node 2 in',
      'node 2 replicated',
    ]);
    expect(traffic[2]?.data?.[0]).toEqual([1, 4]);
    expect(seriesOf(specs[5]!).map((s) => s.name)).toContain('node 2 under-replicated');
  });

  it("adds this machine's CPU (%) and the broker disk's writes against the bytes produced (MiB/s), gaps left open", () => {
    const run = samples(3).map((s, i) => ({
      ...s,
      machineCpuBusy: 0.5 + i * 0.1,
      machineOthersBusy: i === 2 ? null : 0.05,
      // The disk was not read in the second second: a gap, not a zero.
      diskWrittenBytes: i === 1 ? null : 2 * s.producedBytes,
    }));
    const specs = runCharts(run);
    expect(specs.map((s) => s.id).slice(4)).toEqual(['machine-cpu', 'machine-disk']);
    expect(axisName(specs[4]!, 'yAxis')).toBe('%');
    const at = (series: LineSeriesOption | undefined, i: number) =>
      (series?.data?.[i] as number[] | undefined)?.[1];
    const [busy, outside] = seriesOf(specs[4]!);
    expect([0, 1, 2].map((i) => at(busy, i))).toEqual([50, 60, 70]);
    expect(outside?.name).toBe('outside kbench');
    expect([0, 1, 2].map((i) => at(outside, i))).toEqual([5, 5, null]);
    expect(axisName(specs[5]!, 'yAxis')).toBe('MiB/s');
    const [disk, produced] = seriesOf(specs[5]!);
    expect(disk?.name).toBe('disk writes');
    expect(produced?.name).toBe('produced (values)');
    expect(at(disk, 1)).toBeNull();
    expect(at(disk, 0)).toBeCloseTo(2 * (at(produced, 0) as number), 9);
    // Nothing outside kbench at all: a flat 0 is drawn, it says so. A run with no such figure has no line.
    const alone = seriesOf(runCharts(run.map((s) => ({ ...s, machineOthersBusy: 0 })))[4]!);
    expect(alone.map((s) => s.name)).toEqual(['busy', 'outside kbench']);
    expect([0, 1, 2].map((i) => at(alone[1], i))).toEqual([0, 0, 0]);
    const unknown = seriesOf(runCharts(run.map((s) => ({ ...s, machineOthersBusy: null })))[4]!);
    expect(unknown.map((s) => s.name)).toEqual(['busy']);
    // A run on an external cluster reads the CPU only.
    const external = runCharts(run.map((s) => ({ ...s, diskWrittenBytes: null })));
    expect(external.map((s) => s.id).slice(4)).toEqual(['machine-cpu']);
  });

  it("draws a profile's scraped metrics endpoints as nodes by name: in and out, CPU, produce latency, gaps left open", () => {
    const scraped = (node: number, name: string, mib: number) => ({
      node,
      source: 'kafka-jmx' as const,
      name,
      bytesInPerSec: mib * 1024 * 1024,
      bytesOutPerSec: 1024 * 1024,
      underReplicated: node === 2 ? 1 : 0,
      cpuCores: 0.5,
      produceP50Ms: 2,
      produceP99Ms: 9,
    });
    const run = samples(3).map((s, i) => ({
      ...s,
      // broker-b's scrape failed in the second second: a gap, not a zero.
      broker: i === 1 ? [scraped(1, 'broker-a', 2)] : [scraped(1, 'broker-a', 2), scraped(2, 'broker-b', 3)],
    }));
    const specs = runCharts(run);
    expect(specs.map((s) => s.id).slice(4)).toEqual([
      'broker-traffic',
      'broker-health',
      'broker-cpu',
      'broker-produce-latency',
    ]);
    const traffic = seriesOf(specs[4]!);
    expect(traffic.map((s) => s.name)).toEqual([
      'broker-a in',
      'broker-a out',
      'broker-b in',
      'broker-b out',
    ]);
    expect(traffic[2]?.data?.map((p) => (p as number[])[1])).toEqual([3, null, 3]);
    expect(seriesOf(specs[5]!).map((s) => s.name)).toEqual([
      'broker-a under-replicated',
      'broker-b under-replicated',
    ]);
    expect(seriesOf(specs[6]!).map((s) => s.name)).toEqual(['broker-a', 'broker-b']);
    expect(axisName(specs[6]!, 'yAxis')).toBe('cores');
    expect(seriesOf(specs[7]!).map((s) => s.name)).toEqual([
      'broker-a p50',
      'broker-a p99',
      'broker-b p50',
      'broker-b p99',
    ]);
    expect(seriesOf(specs[7]!)[1]?.data?.[0]).toEqual([1, 9]);
  });

  it('draws throughput against the GiB the brokers hold once the log has grown by a GiB', () => {
    const GIB = 1024 ** 3;
    const grown = samples(3).map((s, i) => ({
      ...s,
      broker: [1, 2].map((id) => ({
        node: id,
        bytesInPerSec: 0,
        bytesOutPerSec: 0,
        logSizeBytes: (i + 1) * 0.5 * GIB,
      })),
    }));
    const specs = runCharts(grown);
    expect(specs.map((s) => s.id).at(-1)).toBe('stored-data');
    const stored = specs.at(-1)!;
    expect(axisName(stored, 'xAxis')).toBe('GiB stored (all replicas)');
    expect(axisName(stored, 'yAxis')).toBe('rec/s');
    // Both nodes' logs summed: 1, 2 and 3 GiB.
    expect(seriesOf(stored)[0]?.data).toEqual(
      grown.map((s, i) => [i + 1, (s.producedRecords * 1000) / s.intervalMs]),
    );
    // A run whose log grows less than a GiB keeps the six charts.
    const small = grown.map((s) => ({
      ...s,
      broker: s.broker.map((n) => ({ ...n, logSizeBytes: n.logSizeBytes / 4 })),
    }));
    expect(runCharts(small).map((s) => s.id)).not.toContain('stored-data');
  });

  it('draws bandwidth in MiB/s', () => {
    const spec = bandwidthChart([{ label: 'r', samples: samples(1) }]);
    expect(seriesOf(spec).map((s) => s.data?.[0])).toEqual([
      [1, 5],
      [1, 4],
    ]);
  });

  it('turns animation off', () => {
    for (const spec of runCharts(samples(3))) expect(spec.option.animation).toBe(false);
  });
});

describe('latencyChart', () => {
  it('uses a log y axis in ms with publish p50/p99/max and end-to-end p50/p99', () => {
    const spec = latencyChart([{ label: 'r', samples: samples(5) }]);
    expect(spec.option.yAxis).toMatchObject({ type: 'log', name: 'ms' });
    expect(seriesOf(spec).map((s) => s.name)).toEqual([
      'publish p50',
      'publish p99',
      'publish max',
      'end-to-end p50',
      'end-to-end p99',
    ]);
  });

  it('leaves gaps for null latencies and for zeros a log axis cannot show', () => {
    const data = samples(3);
    data[1] = { ...data[1]!, publishP99Ms: null };
    data[2] = { ...data[2]!, publishP99Ms: 0 };
    const spec = latencyChart([{ label: 'r', samples: data }]);
    expect(seriesOf(spec)[1]?.data).toEqual([
      [1, 8],
      [2, null],
      [3, null],
    ]);
    expect(seriesOf(spec)[1]?.connectNulls).toBe(false);
  });

  it('leaves out end-to-end lines for a run that measured none', () => {
    const spec = latencyChart([
      { label: 'r', samples: samples(3, 0, { e2eP50Ms: null, e2eP99Ms: null, e2eMaxMs: null }) },
    ]);
    expect(seriesOf(spec).map((s) => s.name)).toEqual(['publish p50', 'publish p99', 'publish max']);
  });
});

describe('backlogChart', () => {
  it('draws the backlog in records', () => {
    const spec = backlogChart([{ label: 'r', samples: samples(3) }]);
    expect(seriesOf(spec)[0]?.data).toEqual([
      [1, 0],
      [2, 1000],
      [3, 2000],
    ]);
  });
});

describe('runCharts', () => {
  it('returns throughput, bandwidth, latency and backlog in that order', () => {
    expect(runCharts(samples(3)).map((s) => s.id)).toEqual(['throughput', 'bandwidth', 'latency', 'backlog']);
  });

  it('is deterministic: the same samples give the same options', () => {
    expect(JSON.stringify(runCharts(samples(20, 5), 'x'))).toBe(
      JSON.stringify(runCharts(samples(20, 5), 'x')),
    );
  });

  it('keeps options plain data, so they survive JSON (for the server and the web app)', () => {
    const specs = runCharts(samples(5, 2));
    expect(JSON.parse(JSON.stringify(specs))).toEqual(specs);
  });
});

describe('empty input', () => {
  it('says there are no samples instead of failing, for no samples and for no runs', () => {
    for (const spec of [...runCharts([]), throughputChart([])]) {
      expect(spec.title).toMatch(/no samples/);
      expect(spec.option.title).toMatchObject({ text: spec.title });
      expect(spec.option.series).toEqual([]);
    }
  });
});
