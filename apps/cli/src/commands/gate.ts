// The regression gate: runs judged against a baseline's runs, figure by figure. A regression is a
// change for the worse beyond --max-regression that is also outside the noise the repeats measured
// (@kbench/schema's judge). `kbench gate` judges stored runs; `kbench run --baseline` its own.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { History } from '@kbench/history';
import {
  DEFAULT_GATE_METRIC_NAMES,
  GATE_ALPHA,
  type Judgement,
  judge,
  METRIC_NAMES,
  metricNamed,
  parsePercent,
  type RunCaveat,
  type RunListItem,
  runCaveats,
  runCaveatsText,
  runMetricValue,
  type SideDifference,
  sideDifferences,
} from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { fitTable, fmtNumber } from '../format.js';
import { openHistory } from '../open-history.js';
import { cvText, type MeasuredRun, meanText, measuredRun } from '../repeats.js';
import { UsageError } from '../usage.js';

/** The exit code of a regression (0 passed, 1 a run failed, 2 bad usage). */
export const REGRESSION_EXIT = 3;

/** The threshold when --baseline comes without --max-regression. */
export const DEFAULT_MAX_REGRESSION = 10;

/** The gate's flags, as `kbench gate` and `kbench run` take them. */
export const GATE_FLAGS = {
  baseline: { type: 'string' },
  'max-regression': { type: 'string' },
  metric: { type: 'string', multiple: true },
  junit: { type: 'string' },
  markdown: { type: 'string' },
} as const;

export interface GateSettings {
  baseline: string;
  maxRegression: number;
  /** The figures named with --metric, or null for the defaults the baseline has. */
  metrics: string[] | null;
  junit?: string;
  markdown?: string;
}

/** The gate's flags, checked; null without --baseline (the other gate flags are then refused). */
export function gateSettings(
  command: string,
  values: {
    baseline?: string;
    'max-regression'?: string;
    metric?: string[];
    junit?: string;
    markdown?: string;
  },
): GateSettings | null {
  if (values.baseline === undefined) {
    const stray = (['max-regression', 'metric', 'junit', 'markdown'] as const).find(
      (f) => values[f] !== undefined,
    );
    if (stray)
      throw new UsageError(`kbench ${command}: --${stray} goes with --baseline <run id | tag | series>`);
    return null;
  }
  if (values.baseline.trim() === '')
    throw new UsageError(`kbench ${command}: --baseline takes a run id, a tag or a series id`);
  let maxRegression = DEFAULT_MAX_REGRESSION;
  if (values['max-regression'] !== undefined) {
    try {
      maxRegression = parsePercent(values['max-regression']);
    } catch (err) {
      throw new UsageError(`kbench ${command}: --max-regression: ${(err as Error).message}`);
    }
  }
  let metrics: string[] | null = null;
  if (values.metric !== undefined) {
    const names = values.metric.flatMap((m) => m.split(',')).map((m) => m.trim());
    if (names.some((n) => n === ''))
      throw new UsageError(
        `kbench ${command}: --metric: an empty name; valid metrics: ${METRIC_NAMES.join(', ')}`,
      );
    for (const name of names) {
      try {
        metricNamed(name);
      } catch (err) {
        throw new UsageError(`kbench ${command}: --metric: ${(err as Error).message}`);
      }
    }
    metrics = [...new Set(names)];
  }
  return {
    baseline: values.baseline,
    maxRegression,
    metrics,
    ...(values.junit === undefined ? {} : { junit: values.junit }),
    ...(values.markdown === undefined ? {} : { markdown: values.markdown }),
  };
}

/** Runs a reference names: a series, a run (id or prefix) or a tag; their completed runs. */
export interface RunSet {
  ref: string;
  kind: 'series' | 'run' | 'tag';
  name: string;
  target: string;
  runs: MeasuredRun[];
}

function listedRun(r: RunListItem): MeasuredRun {
  return {
    id: r.id,
    name: r.name,
    target: r.target,
    status: r.status,
    summary: r.summary,
    ...(r.concurrentWith ? { concurrentWith: r.concurrentWith } : {}),
  };
}

/**
 * The completed runs `ref` names, tried as a series id, a run id (or prefix), then a tag. Nothing of
 * that name, no completed run, or runs of several scenarios or targets is a usage error naming `what`.
 */
export async function resolveRunSet(
  history: History,
  ref: string,
  command: string,
  what: string,
): Promise<RunSet> {
  let kind: RunSet['kind'] = 'series';
  let items: MeasuredRun[] = (await history.listRuns({ seriesPrefix: ref }))
    .filter((r) => r.series === ref)
    .map(listedRun);
  if (items.length === 0) {
    const run = await history.getRun(ref);
    if (run) {
      kind = 'run';
      items = [measuredRun(run)];
    }
  }
  if (items.length === 0) {
    kind = 'tag';
    items = (await history.listRuns({ search: ref })).filter((r) => r.tags.includes(ref)).map(listedRun);
  }
  if (items.length === 0)
    throw new UsageError(
      `kbench ${command}: ${what} ${JSON.stringify(ref)}: no run, tag or series of that name in ${history.path} (see kbench list)`,
    );
  const runs = items.filter((r) => r.status === 'completed' && r.summary !== null);
  if (runs.length === 0)
    throw new UsageError(
      `kbench ${command}: ${what} ${JSON.stringify(ref)} (${kind}) has no completed run (${items.map((r) => `${r.id} ${r.status}`).join(', ')})`,
    );
  for (const [field, label] of [
    ['name', 'scenarios'],
    ['target', 'targets'],
  ] as const) {
    const distinct = [...new Set(runs.map((r) => r[field]))];
    if (distinct.length > 1)
      throw new UsageError(
        `kbench ${command}: ${what} ${JSON.stringify(ref)} (${kind}) holds runs of several ${label} (${distinct.join(', ')}); name runs of one`,
      );
  }
  // The settings each ran with, for the gate to say where the two sides differ, and its agents, for
  // one lost (a run's list item carries neither).
  for (const [i, r] of runs.entries()) {
    if (r.scenario !== undefined) continue;
    const record = await history.getRun(r.id);
    if (record) runs[i] = measuredRun(record);
  }
  const first = runs[0] as MeasuredRun;
  return { ref, kind, name: first.name, target: first.target, runs };
}

/**
 * The figures to judge against this baseline: those --metric names, each of which the baseline's
 * runs must all have, or the defaults its runs have. Either way a usage error names what is wrong.
 */
export function gateMetrics(
  command: string,
  settings: GateSettings,
  baseline: RunSet,
  scenario: string,
): string[] {
  if (baseline.name !== scenario)
    throw new UsageError(
      `kbench ${command}: --baseline ${JSON.stringify(baseline.ref)} is a ${baseline.kind} of scenario ${JSON.stringify(baseline.name)}, not ${JSON.stringify(scenario)}; a baseline must be runs of the same scenario`,
    );
  const has = (name: string) =>
    baseline.runs.every((r) => runMetricValue(metricNamed(name), r.summary) !== null);
  if (settings.metrics === null) {
    // A rate of 0 (a consumer-only run produces nothing) is not a figure to judge.
    const moving = (name: string) =>
      !name.endsWith('PerSec') ||
      baseline.runs.some((r) => runMetricValue(metricNamed(name), r.summary) !== 0);
    const judged = DEFAULT_GATE_METRIC_NAMES.filter((n) => has(n) && moving(n));
    if (judged.length === 0)
      throw new UsageError(
        `kbench ${command}: --baseline ${JSON.stringify(baseline.ref)} has none of the default metrics (${DEFAULT_GATE_METRIC_NAMES.join(', ')}); name some with --metric`,
      );
    return judged;
  }
  const missing = settings.metrics.filter((n) => !has(n));
  if (missing.length > 0)
    throw new UsageError(
      `kbench ${command}: --metric: the baseline ${JSON.stringify(baseline.ref)} has no ${missing.join(', ')} in every run (a run without consumers has no consumed rate or end-to-end latency)`,
    );
  return settings.metrics;
}

export interface GateFigure extends Judgement {
  metric: string;
  label: string;
  unit: ReturnType<typeof metricNamed>['unit'];
}

export interface GateResult {
  scenario: string;
  baseline: { ref: string; kind: RunSet['kind']; target: string; runs: string[] };
  current: { ref: string; target: string; runs: string[] };
  maxRegressionPercent: number;
  figures: GateFigure[];
  /** The metrics that regressed; the gate fails when there is one. */
  regressions: string[];
  passed: boolean;
  /**
   * The settings the judged runs did not share with the baseline's (`kbench run --set driver=native`
   * against a kafkajs baseline, an edited scenario file): a change in a figure may be theirs, and the
   * gate says so beside its verdict. Empty when both sides ran the same settings.
   */
  settingsDiffer: SideDifference[];
  /**
   * Why some runs' figures are not the target's alone (they shared the machine, the client set the
   * pace, the rate asked was not reached, an agent was lost), run by run, on either side: the gate
   * says so beside its verdict. Empty when every run judged and every baseline run had none.
   */
  runCaveats: GateRunCaveat[];
}

export interface GateRunCaveat extends RunCaveat {
  side: 'baseline' | 'current';
  run: string;
}

function sideCaveats(side: GateRunCaveat['side'], runs: MeasuredRun[]): GateRunCaveat[] {
  return runs.flatMap((r) =>
    runCaveats({
      summary: r.summary,
      concurrentWith: r.concurrentWith,
      scenario: r.scenario,
      agents: r.agents,
    }).map((c) => ({ side, run: r.id, ...c })),
  );
}

export function evaluateGate(
  scenario: string,
  baseline: RunSet,
  current: { ref: string; target: string; runs: MeasuredRun[] },
  metrics: string[],
  maxRegression: number,
): GateResult {
  const values = (runs: MeasuredRun[], name: string) =>
    runs
      .filter((r) => r.status === 'completed')
      .map((r) => runMetricValue(metricNamed(name), r.summary))
      .filter((v): v is number => v !== null);
  const figures = metrics.map((name): GateFigure => {
    const metric = metricNamed(name);
    return {
      metric: name,
      label: metric.label,
      unit: metric.unit,
      ...judge(metric.better, values(baseline.runs, name), values(current.runs, name), maxRegression),
    };
  });
  const regressions = figures.filter((f) => f.verdict === 'regression').map((f) => f.metric);
  const scenarios = (runs: MeasuredRun[]) =>
    runs.flatMap((r) => (r.scenario === undefined ? [] : [r.scenario]));
  const [before, after] = [scenarios(baseline.runs), scenarios(current.runs)];
  const settingsDiffer = before.length > 0 && after.length > 0 ? sideDifferences(before, after) : [];
  return {
    scenario,
    baseline: {
      ref: baseline.ref,
      kind: baseline.kind,
      target: baseline.target,
      runs: baseline.runs.map((r) => r.id),
    },
    current: { ref: current.ref, target: current.target, runs: current.runs.map((r) => r.id) },
    maxRegressionPercent: maxRegression,
    figures,
    regressions,
    passed: regressions.length === 0,
    settingsDiffer,
    runCaveats: [...sideCaveats('current', current.runs), ...sideCaveats('baseline', baseline.runs)],
  };
}

/** The settings that differ, one line: `driver: native (baseline kafkajs); ...`; null when none do. */
function settingsWarning(result: GateResult): string | null {
  if (result.settingsDiffer.length === 0) return null;
  const each = result.settingsDiffer
    .map((d) => `${d.path}: ${d.current.join(', ')} (baseline ${d.baseline.join(', ')})`)
    .join('; ');
  return `the runs judged did not run the baseline's settings, so a change may be the settings' rather than the system's: ${each}`;
}

/**
 * The runs whose figures are not the target's alone, one line: `judged run ab12 (the client set the
 * pace (producer thread 97% busy)); baseline run cd34 (shared the machine with run ef56)`; null when none.
 */
function caveatsWarning(result: GateResult): string | null {
  if (result.runCaveats.length === 0) return null;
  const byRun = new Map<string, GateRunCaveat[]>();
  for (const c of result.runCaveats) {
    const key = `${c.side === 'current' ? 'judged' : 'baseline'} run ${c.run}`;
    byRun.set(key, [...(byRun.get(key) ?? []), c]);
  }
  const each = [...byRun].map(([key, caveats]) => `${key} (${runCaveatsText(caveats)})`).join('; ');
  return `some runs' figures are not the target's alone, so a change may be theirs rather than the system's: ${each}`;
}

/** The gate's warnings, each a line without its `warning: ` prefix. */
function warnings(result: GateResult): string[] {
  return [settingsWarning(result), caveatsWarning(result)].filter((w): w is string => w !== null);
}

function changeText(change: number | null): string {
  if (change === null) return '-';
  if (!Number.isFinite(change)) return change > 0 ? '+inf' : '-inf';
  return `${change < 0 ? '-' : '+'}${fmtNumber(Math.abs(change), 1)}%`;
}

function sideText(figure: GateFigure, side: 'baseline' | 'current'): string {
  const stats = figure[side];
  return stats ? `${meanText(figure.unit, stats)} (n=${stats.n})` : '-';
}

function pText(figure: GateFigure): string {
  if (figure.rule === 'single') return 'single runs: needs twice the threshold';
  return figure.pValue === null
    ? ''
    : `p=${figure.pValue < 0.0001 ? '<0.0001' : fmtNumber(figure.pValue, 4)}`;
}

/** The rule in one sentence, for the text and the Markdown. */
function ruleText(result: GateResult): string {
  return `A regression is a change for the worse beyond ${fmtNumber(result.maxRegressionPercent, 1)}% that is also outside the noise: Welch's t-test at ${100 - GATE_ALPHA * 100}% with repeats on both sides, the other side's 95% prediction interval for a single run, twice the threshold for a single run on each side.`;
}

function headline(result: GateResult): string {
  const n = (runs: string[]) => `${runs.length} run${runs.length === 1 ? '' : 's'}`;
  const where =
    result.baseline.target === result.current.target
      ? `on ${result.current.target}`
      : `on ${result.current.target} (baseline on ${result.baseline.target})`;
  return `${result.scenario} ${where}: ${n(result.current.runs)} against the baseline ${result.baseline.ref} (${result.baseline.kind}, ${n(result.baseline.runs)})`;
}

/** The gate's verdict for a terminal. */
export function gateText(result: GateResult): string {
  const rows = [
    ['metric', 'baseline mean ± 95% CI', 'current mean ± 95% CI', 'CV', 'change', 'verdict', ''],
    ...result.figures.map((f) => [
      f.metric,
      sideText(f, 'baseline'),
      sideText(f, 'current'),
      f.current ? cvText(f.current) : '-',
      changeText(f.changePercent),
      f.verdict,
      pText(f),
    ]),
  ];
  const verdict = result.passed
    ? `gate passed: no regression beyond ${fmtNumber(result.maxRegressionPercent, 1)}%`
    : `gate FAILED: ${result.regressions.join(', ')} regressed beyond ${fmtNumber(result.maxRegressionPercent, 1)}% (exit ${REGRESSION_EXIT})`;
  const warned = warnings(result)
    .map((w) => `warning: ${w}\n`)
    .join('');
  return `gate: ${headline(result)}\n${fitTable(rows, ['l', 'r', 'r', 'r', 'r', 'l', 'l'])}\n${ruleText(result)}\n${warned}${verdict}`;
}

function mdCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The verdict as Markdown for a pull-request comment: a heading, the table and the rule. */
export function gateMarkdown(result: GateResult): string {
  const lines = [
    `### kbench gate: ${result.passed ? 'passed' : `regression in ${result.regressions.map((m) => `\`${m}\``).join(', ')}`}`,
    '',
    mdCell(headline(result)),
    '',
    '| metric | baseline mean ± 95% CI | current mean ± 95% CI | change | verdict |',
    '| --- | ---: | ---: | ---: | --- |',
    ...result.figures.map((f) => {
      const verdict = f.verdict === 'regression' ? '**regression**' : f.verdict;
      const p = pText(f);
      return `| ${mdCell(`${f.label} (\`${f.metric}\`)`)} | ${mdCell(sideText(f, 'baseline'))} | ${mdCell(sideText(f, 'current'))} | ${changeText(f.changePercent)} | ${verdict}${p ? ` (${mdCell(p)})` : ''} |`;
    }),
    '',
    ruleText(result),
    '',
  ];
  for (const warning of warnings(result)) lines.push(`> **warning**: ${mdCell(warning)}`, '');
  return lines.join('\n');
}

function xml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** The verdict as JUnit XML: one test case per metric, a failure for each regression, skipped where a side has no value. */
export function gateJunit(result: GateResult): string {
  const failures = result.regressions.length;
  const skipped = result.figures.filter((f) => f.verdict === 'missing').length;
  const suite = `kbench gate: ${result.scenario}`;
  const warned = warnings(result);
  const cases = result.figures.map((f) => {
    const detail = `${f.label}: baseline ${sideText(f, 'baseline')}, current ${sideText(f, 'current')}, change ${changeText(f.changePercent)}, ${f.verdict}${pText(f) ? ` (${pText(f)})` : ''}`;
    const open = `    <testcase classname="${xml(`kbench.gate.${result.scenario}`)}" name="${xml(f.metric)}"`;
    if (f.verdict === 'regression')
      return `${open}>\n      <failure type="regression" message="${xml(`${f.metric} regressed ${changeText(f.changePercent)} (beyond ${result.maxRegressionPercent}% and outside the noise)`)}">${xml(detail)}</failure>\n    </testcase>`;
    if (f.verdict === 'missing')
      return `${open}>\n      <skipped message="${xml(`${f.metric}: no value on one side`)}"/>\n    </testcase>`;
    return `${open}>\n      <system-out>${xml(detail)}</system-out>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="kbench gate" tests="${result.figures.length}" failures="${failures}">`,
    `  <testsuite name="${xml(suite)}" tests="${result.figures.length}" failures="${failures}" errors="0" skipped="${skipped}">`,
    ...cases,
    ...(warned.length > 0
      ? [`    <system-err>${xml(warned.map((w) => `warning: ${w}`).join('\n'))}</system-err>`]
      : []),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/**
 * Prints the verdict (text, or nothing with --json: the caller puts the result in its JSON) and the
 * Markdown summary, and writes --junit and --markdown; returns the gate's exit code.
 */
export async function reportGate(result: GateResult, settings: GateSettings, json: boolean): Promise<number> {
  const markdown = gateMarkdown(result);
  if (!json) process.stdout.write(`\n${gateText(result)}\n\n${markdown}`);
  for (const [file, text] of [
    [settings.markdown, markdown],
    [settings.junit, gateJunit(result)],
  ] as const) {
    if (file === undefined) continue;
    const target = path.resolve(file);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, text);
    process.stderr.write(`wrote ${target}\n`);
  }
  return result.passed ? 0 : REGRESSION_EXIT;
}

/** `kbench gate <run | series | tag> --baseline <run | series | tag> [--max-regression 10%] [--metric ...]`. */
export async function gateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('gate', argv, {
    ...GATE_FLAGS,
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1)
    throw new UsageError('kbench gate: give one run id, series id or tag to judge, and --baseline');
  const settings = gateSettings('gate', values);
  if (!settings) throw new UsageError('kbench gate: --baseline <run id | tag | series> is required');
  const history = await openHistory();
  const current = await resolveRunSet(history, positionals[0] as string, 'gate', 'the runs judged');
  const baseline = await resolveRunSet(history, settings.baseline, 'gate', '--baseline');
  const shared = current.runs.filter((r) => baseline.runs.some((b) => b.id === r.id));
  if (shared.length > 0)
    throw new UsageError(
      `kbench gate: the runs judged and the baseline share ${shared.map((r) => r.id).join(', ')}; name other runs`,
    );
  const metrics = gateMetrics('gate', settings, baseline, current.name);
  const result = evaluateGate(current.name, baseline, current, metrics, settings.maxRegression);
  const code = await reportGate(result, settings, Boolean(values.json));
  if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return code;
}
