// The statistics of repeated runs as the CLI prints them: each headline figure's mean, 95% confidence
// interval and coefficient of variation over the runs of one configuration.
import {
  describeSample,
  HEADLINE_METRIC_NAMES,
  type Metric,
  metricNamed,
  type RunRecord,
  type RunSummary,
  runMetricValue,
  type SampleStats,
} from '@kbench/schema';
import { fitTable, fmtMs, fmtNumber } from './format.js';

/** What the statistics need of a run, from a stored record or a list item alike. */
export interface MeasuredRun {
  id: string;
  name: string;
  target: string;
  status: string;
  summary: RunSummary | null;
  sweepValue?: string;
  /** The scenario as it ran (resolved), where it is known: the gate compares the two sides' settings. */
  scenario?: RunRecord['scenario'];
  /** The other kbench runs that shared the machine (the gate names them). */
  concurrentWith?: string[];
  /** `environment.agents` of a run whose load came from agents (the gate names a lost one). */
  agents?: RunRecord['environment']['agents'];
}

export function measuredRun(run: RunRecord): MeasuredRun {
  return {
    id: run.id,
    name: run.scenario.name,
    target: run.scenario.target,
    status: run.status,
    summary: run.summary,
    ...(run.sweepValue === undefined ? {} : { sweepValue: run.sweepValue }),
    scenario: run.scenario,
    ...(run.concurrentWith ? { concurrentWith: run.concurrentWith } : {}),
    ...(run.environment.agents ? { agents: run.environment.agents } : {}),
  };
}

export interface FigureStatistics {
  metric: string;
  label: string;
  unit: Metric['unit'];
  better: Metric['better'];
  /** One value per run that has the figure. */
  values: number[];
  stats: SampleStats;
}

/** Each named figure's statistics over the completed runs that have it (figures none has are left out). */
export function figureStatistics(
  runs: MeasuredRun[],
  names: readonly string[] = HEADLINE_METRIC_NAMES,
): FigureStatistics[] {
  const out: FigureStatistics[] = [];
  for (const name of names) {
    const metric = metricNamed(name);
    const values = runs
      .filter((r) => r.status === 'completed')
      .map((r) => runMetricValue(metric, r.summary))
      .filter((v): v is number => v !== null);
    const stats = describeSample(values);
    if (stats)
      out.push({
        metric: name,
        label: metric.label,
        unit: metric.unit,
        better: metric.better,
        values,
        stats,
      });
  }
  return out;
}

/** A figure in its unit, as the terminal and the gate's Markdown print it. */
export function figureText(unit: Metric['unit'], value: number): string {
  if (unit === 'ms') return fmtMs(value);
  if (unit === 'MB/s' || unit === 'cores') return fmtNumber(value, 2);
  return fmtNumber(value);
}

/** `12,345 ± 67` (the 95% interval's half width), or the mean alone for a single run. */
export function meanText(unit: Metric['unit'], stats: SampleStats): string {
  const mean = figureText(unit, stats.mean);
  return stats.ci95 ? `${mean} ± ${figureText(unit, stats.ci95.halfWidth)}` : mean;
}

/** `3.2%`, or '-' where there is none. */
export function cvText(stats: SampleStats): string {
  return stats.cv === null ? '-' : `${fmtNumber(stats.cv * 100, 1)}%`;
}

/** Runs grouped by configuration (target and sweep value), in the order each first ran. */
export function groupRuns(runs: MeasuredRun[]): { key: string; runs: MeasuredRun[] }[] {
  const groups = new Map<string, MeasuredRun[]>();
  for (const run of runs) {
    const key = [run.target, run.sweepValue].filter((p) => p !== undefined).join(' ');
    const group = groups.get(key) ?? [];
    group.push(run);
    groups.set(key, group);
  }
  return [...groups].map(([key, list]) => ({ key, runs: list }));
}

/** The statistics of one configuration's runs as a table: figure, mean ± 95% CI, CV, min and max. */
export function statisticsText(title: string, figures: FigureStatistics[]): string {
  const rows = [
    ['', 'mean ± 95% CI', 'CV', 'min', 'max', 'runs'],
    ...figures.map((f) => [
      f.label,
      meanText(f.unit, f.stats),
      cvText(f.stats),
      figureText(f.unit, Math.min(...f.values)),
      figureText(f.unit, Math.max(...f.values)),
      String(f.stats.n),
    ]),
  ];
  return `${title}\n${fitTable(rows, ['l', 'r', 'r', 'r', 'r', 'r'])}`;
}
