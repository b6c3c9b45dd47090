// The four time charts of a run, and the set a run page shows.
import { type BrokerNodeSample, type FaultEvent, parseDurationMs, type Sample } from '@kbench/schema';
import { type ChartSpec, type FaultMark, perSecond, type RunSeries, timeChart } from './common.js';

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

function nodeFigure(node: number, read: (n: BrokerNodeSample) => number | null | undefined) {
  return (s: Sample) => {
    const n = s.broker?.find((b) => b.node === node);
    const value = n ? read(n) : undefined;
    return value === undefined ? null : value;
  };
}

/** Per bundled node: bytes received and replicated, in MiB/s. */
export function brokerTrafficChart(runs: RunSeries[]): ChartSpec {
  return timeChart(
    { id: 'broker-traffic', title: 'Broker nodes: traffic', yName: 'MiB/s' },
    runs,
    brokerNodes(runs).flatMap((node) => [
      { name: `node ${node} in`, value: nodeFigure(node, (n) => n.bytesInPerSec / MIB) },
      {
        name: `node ${node} replicated`,
        value: nodeFigure(node, (n) => (n.replicatedBytesPerSec ?? 0) / MIB),
        lineType: 'dashed' as const,
      },
    ]),
  );
}

/** Per bundled node: fsyncs per interval and under-replicated partitions. */
export function brokerHealthChart(runs: RunSeries[]): ChartSpec {
  return timeChart(
    { id: 'broker-health', title: 'Broker nodes: fsyncs and under-replicated partitions', yName: 'count' },
    runs,
    brokerNodes(runs).flatMap((node) => [
      { name: `node ${node} fsyncs`, value: nodeFigure(node, (n) => n.fsyncs) },
      {
        name: `node ${node} under-replicated`,
        value: nodeFigure(node, (n) => n.underReplicated),
        lineType: 'dashed' as const,
      },
    ]),
  );
}

/**
 * The charts a run page shows, in order: throughput, bandwidth, latency, backlog, and for runs on the
 * bundled broker its nodes' traffic and health.
 */
export function runCharts(samples: Sample[], label = 'run', faults: FaultMark[] = []): ChartSpec[] {
  const runs = [{ label, samples, faults }];
  const charts = [throughputChart(runs), bandwidthChart(runs), latencyChart(runs), backlogChart(runs)];
  if (samples.some((s) => (s.broker?.length ?? 0) > 0))
    charts.push(brokerTrafficChart(runs), brokerHealthChart(runs));
  return charts;
}

function mib(bytesPerSecond: number | null): number | null {
  return bytesPerSecond === null ? null : bytesPerSecond / MIB;
}

type TimelineFault = { at: string; action: string; node: number | string; for?: string };

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
  const node = f.node === null ? String(f.target) : `node ${f.node}`;
  const lasting = f.durationMs === null ? '' : ` for ${f.durationMs / 1000}s`;
  return { t: f.t, label: `${f.action} ${node}${lasting}${f.error ? ' (failed)' : ''}` };
}

function timelineMarks(faults: TimelineFault[]): FaultMark[] {
  return faults.map((f) => ({
    t: (parseDurationMs(f.at) ?? 0) / 1000,
    label: `${f.action} ${typeof f.node === 'number' ? `node ${f.node}` : f.node}${f.for ? ` for ${f.for}` : ''}`,
  }));
}
