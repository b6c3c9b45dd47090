// The four time charts of a run, and the set a run page shows.
import { type FaultEvent, parseDurationMs, type Sample } from '@kbench/schema';
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

/** The charts a run page shows, in order: throughput, bandwidth, latency, backlog. */
export function runCharts(samples: Sample[], label = 'run', faults: FaultMark[] = []): ChartSpec[] {
  const runs = [{ label, samples, faults }];
  return [throughputChart(runs), bandwidthChart(runs), latencyChart(runs), backlogChart(runs)];
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
