// The four time charts of a run, and the set a run page shows.
import { type BrokerNodeSample, type FaultEvent, parseDurationMs, type Sample } from '@kbench/schema';
import {
  type ChartSpec,
  type FaultMark,
  heading,
  PALETTE,
  perSecond,
  type RunSeries,
  runIdentity,
  timeChart,
} from './common.js';

const MIB = 1024 * 1024;

/** Records per second produced and consumed (consumed only for runs that consumed anything). */
export function throughputChart(runs: RunSeries[]): ChartSpec {
  return timeChart({ id: 'throughput', title: 'Throughput', yName: 'rec/s' }, runs, [
    { name: 'produced', value: (s) => perSecond(s.producedRecords, s.intervalMs) },
    { name: 'consumed', value: (s) => perSecond(s.consumedRecords, s.intervalMs), lineType: 'dashed' },
  ]);
}

/** Value bytes per second produced and consumed, in MiB/s (as the summary's mbPerSec counts them). */
export function bandwidthChart(runs: RunSeries[]): ChartSpec {
  return timeChart({ id: 'bandwidth', title: 'Bandwidth', yName: 'MiB/s' }, runs, [
    { name: 'produced', value: (s) => mib(perSecond(s.producedBytes, s.intervalMs)) },
    { name: 'consumed', value: (s) => mib(perSecond(s.consumedBytes, s.intervalMs)), lineType: 'dashed' },
  ]);
}

/** Publish (send to ack) and end-to-end latency percentiles of each second, in ms on a log axis. */
export function latencyChart(runs: RunSeries[]): ChartSpec {
  return timeChart({ id: 'latency', title: 'Latency', yName: 'ms', yLog: true }, runs, [
    { name: 'publish p50', value: (s) => s.publishP50Ms },
    { name: 'publish p99', value: (s) => s.publishP99Ms, lineType: 'dashed' },
    { name: 'publish max', value: (s) => s.publishMaxMs, lineType: 'dotted' },
    { name: 'end-to-end p50', value: (s) => s.e2eP50Ms, width: 1 },
    { name: 'end-to-end p99', value: (s) => s.e2eP99Ms, lineType: 'dashed', width: 1 },
  ]);
}

/** Records produced and not yet consumed, at the end of each second. */
export function backlogChart(runs: RunSeries[]): ChartSpec {
  return timeChart({ id: 'backlog', title: 'Backlog', yName: 'records' }, runs, [
    { name: 'backlog', value: (s) => s.backlog },
  ]);
}

/** The node ids that appear in the samples' broker figures, sorted. */
function brokerNodes(runs: RunSeries[]): number[] {
  const ids = new Set<number>();
  for (const run of runs) for (const s of run.samples) for (const n of s.broker ?? []) ids.add(n.node);
  return [...ids].sort((a, b) => a - b);
}

/** A node as the charts name it: a scraped endpoint by its name, a bundled node by its id. */
function nodeLabel(runs: RunSeries[], node: number): string {
  for (const run of runs)
    for (const s of run.samples) {
      const n = s.broker?.find((b) => b.node === node);
      if (n?.name !== undefined) return n.name;
    }
  return `node ${node}`;
}

/** Whether a node's figures were scraped from a metrics endpoint (not the bundled broker's counters). */
function scrapedNode(runs: RunSeries[], node: number): boolean {
  return runs.some((run) =>
    run.samples.some((s) =>
      s.broker?.some((b) => b.node === node && b.source !== undefined && b.source !== 'bundled'),
    ),
  );
}

function nodeFigure(node: number, read: (n: BrokerNodeSample) => number | null | undefined) {
  return (s: Sample) => {
    const n = s.broker?.find((b) => b.node === node);
    const value = n ? read(n) : undefined;
    return value === undefined ? null : value;
  };
}

/** Per node: bytes received, and replicated (bundled) or sent (a scraped endpoint), in MiB/s. */
export function brokerTrafficChart(runs: RunSeries[]): ChartSpec {
  return timeChart(
    { id: 'broker-traffic', title: 'Broker nodes: traffic', yName: 'MiB/s' },
    runs,
    brokerNodes(runs).flatMap((node) => {
      const label = nodeLabel(runs, node);
      return [
        { name: `${label} in`, value: nodeFigure(node, (n) => n.bytesInPerSec / MIB) },
        scrapedNode(runs, node)
          ? {
              name: `${label} out`,
              value: nodeFigure(node, (n) => n.bytesOutPerSec / MIB),
              lineType: 'dashed' as const,
            }
          : {
              name: `${label} replicated`,
              value: nodeFigure(node, (n) => (n.replicatedBytesPerSec ?? 0) / MIB),
              lineType: 'dashed' as const,
            },
      ];
    }),
  );
}

/** Per bundled node: fsyncs per interval and under-replicated partitions. */
export function brokerHealthChart(runs: RunSeries[]): ChartSpec {
  return timeChart(
    { id: 'broker-health', title: 'Broker nodes: fsyncs and under-replicated partitions', yName: 'count' },
    runs,
    brokerNodes(runs).flatMap((node) => {
      const label = nodeLabel(runs, node);
      const underReplicated = {
        name: `${label} under-replicated`,
        value: nodeFigure(node, (n) => n.underReplicated),
        lineType: 'dashed' as const,
      };
      // A metrics endpoint does not count fsyncs.
      if (scrapedNode(runs, node)) return [underReplicated];
      return [{ name: `${label} fsyncs`, value: nodeFigure(node, (n) => n.fsyncs) }, underReplicated];
    }),
  );
}

/** Per scraped node: the CPU cores its process used. */
export function brokerCpuChart(runs: RunSeries[]): ChartSpec {
  return timeChart(
    { id: 'broker-cpu', title: 'Broker nodes: CPU', yName: 'cores' },
    runs,
    brokerNodes(runs).map((node) => ({
      name: nodeLabel(runs, node),
      value: nodeFigure(node, (n) => n.cpuCores),
    })),
  );
}

/** Per scraped node: produce request latency p50 and p99 as the endpoint reports it, in ms on a log axis. */
export function brokerProduceLatencyChart(runs: RunSeries[]): ChartSpec {
  return timeChart(
    { id: 'broker-produce-latency', title: 'Broker nodes: produce request latency', yName: 'ms', yLog: true },
    runs,
    brokerNodes(runs).flatMap((node) => {
      const label = nodeLabel(runs, node);
      return [
        { name: `${label} p50`, value: nodeFigure(node, (n) => n.produceP50Ms) },
        { name: `${label} p99`, value: nodeFigure(node, (n) => n.produceP99Ms), lineType: 'dashed' as const },
      ];
    }),
  );
}

/** Bytes the bundled broker's nodes hold on disk at a sample (every replica counted), or null. */
function storedBytes(s: Sample): number | null {
  const sizes = (s.broker ?? []).flatMap((n) => (n.logSizeBytes === undefined ? [] : [n.logSizeBytes]));
  return sizes.length === 0 ? null : sizes.reduce((sum, b) => sum + b, 0);
}

/**
 * What the disk under the broker's data wrote each second against the value bytes produced, in
 * MiB/s: under fsync batch the disk line runs above the produced one (journal, then segment); under
 * fsync none it stays near 0 while the bytes sit in the page cache.
 */
export function machineDiskChart(runs: RunSeries[]): ChartSpec {
  return timeChart({ id: 'machine-disk', title: "This machine: the broker's disk", yName: 'MiB/s' }, runs, [
    {
      name: 'disk writes',
      value: (s) =>
        typeof s.diskWrittenBytes === 'number' ? mib(perSecond(s.diskWrittenBytes, s.intervalMs)) : null,
    },
    {
      name: 'produced (values)',
      value: (s) => mib(perSecond(s.producedBytes, s.intervalMs)),
      lineType: 'dashed',
    },
  ]);
}

/**
 * The share of all the machine's cores that was busy each second (everything on it), and the part
 * of it outside the run's own processes, in %.
 */
export function machineCpuChart(runs: RunSeries[]): ChartSpec {
  const percent = (share: number | null | undefined) =>
    typeof share === 'number' ? Math.round(share * 1000) / 10 : null;
  return timeChart({ id: 'machine-cpu', title: 'This machine: CPU busy', yName: '%' }, runs, [
    { name: 'busy', value: (s) => percent(s.machineCpuBusy) },
    // A flat 0 is the news here: nothing else used the machine.
    {
      name: 'outside kbench',
      value: (s) => percent(s.machineOthersBusy),
      lineType: 'dashed',
      keepZero: true,
    },
  ]);
}

/** The log grows by this much in a run before the stored-data chart is worth drawing. */
const STORED_DATA_CHART_MIN_GROWTH = 1024 ** 3;

/**
 * Records per second produced against the data the bundled broker holds (GiB, every replica): the
 * 2014 write-up's "throughput vs stored data", where a log whose appends cost O(1) draws a flat line.
 */
export function storedDataChart(runs: RunSeries[]): ChartSpec {
  const title = 'Throughput vs stored data';
  const only = runs.length === 1 ? runs[0] : undefined;
  const layout = heading(title, only?.id ? runIdentity(only.label, only.id) : undefined);
  const series = runs
    .filter((run) => run.samples.length > 0)
    .map((run, i) => {
      const color = PALETTE[i % PALETTE.length];
      const data = run.samples
        .map((s): [number, number] | null => {
          const stored = storedBytes(s);
          const rate = perSecond(s.producedRecords, s.intervalMs);
          return stored === null || rate === null ? null : [stored / 1024 ** 3, rate];
        })
        .filter((p): p is [number, number] => p !== null);
      return {
        type: 'line' as const,
        name: runs.length === 1 ? 'produced' : `${run.label}: produced`,
        data,
        showSymbol: data.length < 2,
        color,
        lineStyle: { color, width: 2 },
      };
    });
  return {
    id: 'stored-data',
    title,
    option: {
      animation: false,
      color: [...PALETTE],
      title: layout.title,
      tooltip: { trigger: 'axis' },
      grid: { left: 72, right: 32, top: layout.gridTop, bottom: 56 },
      legend: { top: layout.legendTop, data: series.map((s) => s.name) },
      xAxis: {
        type: 'value',
        name: 'GiB stored (all replicas)',
        nameLocation: 'middle',
        nameGap: 30,
        min: 0,
      },
      yAxis: { type: 'value', name: 'rec/s', nameLocation: 'end', min: 0 },
      series,
    },
  };
}

/**
 * The charts a run page shows, in order: throughput, bandwidth, latency, backlog, and for runs on the
 * bundled broker (or with a profile's metrics endpoints) its nodes' traffic and health, the scraped
 * nodes' CPU and produce latency when they report them, and throughput against the data stored
 * when the log grew by a GiB or more; then this machine's CPU and the broker's disk, where read. Given the stored run's id, each chart names the run (label and id).
 */
export function runCharts(
  samples: Sample[],
  label = 'run',
  faults: FaultMark[] = [],
  id?: string,
): ChartSpec[] {
  const runs: RunSeries[] = [{ label, samples, faults, ...(id === undefined ? {} : { id }) }];
  const charts = [throughputChart(runs), bandwidthChart(runs), latencyChart(runs), backlogChart(runs)];
  if (samples.some((s) => (s.broker?.length ?? 0) > 0)) {
    charts.push(brokerTrafficChart(runs), brokerHealthChart(runs));
    // A scraped endpoint's own figures (docs/targets.md#metrics), when it has them.
    const nodes = samples.flatMap((s) => s.broker ?? []);
    if (nodes.some((n) => typeof n.cpuCores === 'number')) charts.push(brokerCpuChart(runs));
    if (nodes.some((n) => typeof n.produceP99Ms === 'number' || typeof n.produceP50Ms === 'number'))
      charts.push(brokerProduceLatencyChart(runs));
    const stored = samples.map(storedBytes).filter((b): b is number => b !== null);
    if (stored.length > 1 && Math.max(...stored) - Math.min(...stored) >= STORED_DATA_CHART_MIN_GROWTH)
      charts.push(storedDataChart(runs));
  }
  // The machine's own figures (Linux), for runs that read them.
  if (samples.some((s) => typeof s.machineCpuBusy === 'number')) charts.push(machineCpuChart(runs));
  if (samples.some((s) => typeof s.diskWrittenBytes === 'number')) charts.push(machineDiskChart(runs));
  return charts;
}

function mib(bytesPerSecond: number | null): number | null {
  return bytesPerSecond === null ? null : bytesPerSecond / MIB;
}

/** A fault as a scenario's timeline writes it. */
export type TimelineFault = {
  at: string;
  action: string;
  node?: number | string;
  for?: string;
  run?: string;
};

/** A command fault's command line for a marker's label, cut to 40 characters. */
function shortCommand(line: string): string {
  return line.length > 40 ? `${line.slice(0, 39)}…` : line;
}

/**
 * Fault markers (seconds from the start of load) for a run: the faults it recorded as executed when
 * given a run that has them, else the scenario's timeline (runs stored before faults were recorded).
 */
export function faultMarks(
  source: { faults?: TimelineFault[] } | { scenario: { faults?: TimelineFault[] }; faults?: FaultEvent[] },
): FaultMark[] {
  if ('scenario' in source) {
    if (source.faults) return source.faults.map(recordedMark);
    return timelineMarks(source.scenario.faults ?? []);
  }
  return timelineMarks(source.faults ?? []);
}

function recordedMark(f: FaultEvent): FaultMark {
  const node =
    f.action === 'command'
      ? shortCommand(String(f.target))
      : f.node === null
        ? String(f.target)
        : `node ${f.node}`;
  const lasting = f.durationMs === null ? '' : ` for ${f.durationMs / 1000}s`;
  const label = `${f.action} ${node}${lasting}${f.error ? ' (failed)' : ''}`;
  return { t: f.t, label, ...(f.recovery ? { until: f.recovery.windowEndT } : {}) };
}

function timelineMarks(faults: TimelineFault[]): FaultMark[] {
  return faults.map((f) => ({
    t: (parseDurationMs(f.at) ?? 0) / 1000,
    label:
      f.action === 'command'
        ? `command ${shortCommand(f.run ?? '')}`
        : `${f.action} ${typeof f.node === 'number' ? `node ${f.node}` : f.node}${f.for ? ` for ${f.for}` : ''}`,
  }));
}
