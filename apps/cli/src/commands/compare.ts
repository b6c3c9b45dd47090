import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { compareCharts, comparedRuns, compareReportHtml, compareReportMarkdown } from '@kbench/charts';
import type { History } from '@kbench/history';
import {
  changeText,
  concurrentWarning,
  distinctNames,
  figureOf,
  HEADLINE_FIGURES,
  type HeadlineFigure,
  percentChange,
  type RunRecord,
  runCaveatsText,
  scenarioDifferences,
  storedRunCaveats,
} from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { fitTable, fmtMs, fmtNumber, wrapText } from '../format.js';
import { writeChartFolders } from '../images.js';
import { openHistory } from '../open-history.js';
import { UsageError } from '../usage.js';

/** Loads runs by id or prefix, with a usage error naming any that is missing. */
export async function loadRuns(history: History, ids: string[], command: string): Promise<RunRecord[]> {
  const runs: RunRecord[] = [];
  for (const id of ids) {
    const run = await history.getRun(id);
    if (!run) throw new UsageError(`kbench ${command}: no run ${JSON.stringify(id)} in ${history.path}`);
    runs.push(run);
  }
  return runs;
}

/** Where a figure is printed in a terminal's narrow columns. */
const FIGURE_TEXT: Record<HeadlineFigure['unit'], (value: number) => string> = {
  'rec/s': (v) => fmtNumber(v),
  'MB/s': (v) => fmtNumber(v, 2),
  ms: fmtMs,
  cores: (v) => fmtNumber(v, 2),
};

/** Each run's figure, and for the runs other than the baseline its change against the baseline's. */
function figureRow(figure: HeadlineFigure, runs: RunRecord[], baseline: RunRecord | undefined): string[] {
  const base = baseline ? figureOf(figure, baseline.summary) : null;
  return [
    figure.label,
    ...runs.map((run) => {
      const value = figureOf(figure, run.summary);
      if (value === null) return '-';
      const change = run === baseline ? null : changeText(value, base);
      return change === null
        ? FIGURE_TEXT[figure.unit](value)
        : `${FIGURE_TEXT[figure.unit](value)} (${change})`;
    }),
  ];
}

function headlineRows(runs: RunRecord[], baseline: RunRecord | undefined): string[][] {
  const row = (label: string, f: (run: RunRecord) => string) => [label, ...runs.map(f)];
  return [
    row('status', (run) => run.status),
    row('target', ({ environment: env }) => (env.profile ? `${env.target} (${env.profile})` : env.target)),
    row('driver', (run) => run.environment.driver),
    ...HEADLINE_FIGURES.map((figure) => figureRow(figure, runs, baseline)),
  ];
}

/** A self-contained HTML report, or Markdown with its chart SVGs beside it. */
async function writeReport(history: History, runs: RunRecord[], file: string): Promise<void> {
  const entries = await Promise.all(
    runs.map(async (run) => ({ run, samples: await history.getSamples(run.id) })),
  );
  const now = new Date().toISOString();
  const target = path.resolve(file);
  await mkdir(path.dirname(target), { recursive: true });
  if (/\.html?$/i.test(file)) {
    await writeFile(target, compareReportHtml(entries, now));
  } else if (/\.md$/i.test(file)) {
    const prefix = path.basename(target).replace(/\.md$/i, '');
    const { markdown, images } = compareReportMarkdown(entries, now, prefix);
    await writeFile(target, markdown);
    for (const image of images) await writeFile(path.join(path.dirname(target), image.file), image.svg);
  } else {
    throw new UsageError(
      `kbench compare: --report takes a file ending in .html or .md (got ${JSON.stringify(file)})`,
    );
  }
  process.stderr.write(`wrote the report to ${target}\n`);
}

export async function compareCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('compare', argv, {
    json: { type: 'boolean' },
    svg: { type: 'string' },
    png: { type: 'string' },
    report: { type: 'string' },
    baseline: { type: 'string' },
  });
  if (positionals.length < 2 || positionals.length > 8) {
    throw new UsageError('kbench compare: give 2 to 8 run ids (see kbench list)');
  }
  const history = await openHistory();
  const runs = await loadRuns(history, positionals, 'compare');
  const baseline =
    values.baseline === undefined ? undefined : await baselineOf(history, runs, values.baseline);
  const differences = scenarioDifferences(runs.map((r) => r.scenario));
  await writeChartFolders(values, 'kbench-compare', async () => {
    const samples = await Promise.all(runs.map((r) => history.getSamples(r.id)));
    return compareCharts(comparedRuns(runs, samples));
  });
  if (values.report !== undefined) await writeReport(history, runs, values.report);
  if (values.json) {
    const changes = baseline ? { baseline: baseline.id, changes: changesAgainst(runs, baseline) } : {};
    process.stdout.write(`${JSON.stringify({ runs, differences, ...changes }, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`${comparisonText(runs, baseline)}\n`);
  return 0;
}

/** The run `--baseline` names (an id or prefix), which must be one of those compared. */
async function baselineOf(history: History, runs: RunRecord[], id: string): Promise<RunRecord> {
  const [named] = await loadRuns(history, [id], 'compare --baseline');
  const baseline = runs.find((r) => r.id === named?.id);
  if (!baseline)
    throw new UsageError(
      `kbench compare: --baseline ${id} is not one of the runs compared; give it among the run ids too`,
    );
  return baseline;
}

/** Each headline figure's change against the baseline in percent, one value per run (null for the baseline). */
function changesAgainst(
  runs: RunRecord[],
  baseline: RunRecord,
): { figure: string; percent: (number | null)[] }[] {
  return HEADLINE_FIGURES.map((figure) => {
    const base = figureOf(figure, baseline.summary);
    return {
      figure: figure.label,
      percent: runs.map((run) =>
        run === baseline ? null : percentChange(figureOf(figure, run.summary), base),
      ),
    };
  });
}

/** Room for a run's name on its line above the table: 120 columns less the id, the indents and the baseline's mark. */
/** `warning: TEXT` in lines of at most 120 columns, each after the first indented by two. */
function warningLines(text: string): string {
  return wrapText(`warning: ${text}`, 118).join('\n  ');
}

const BASELINE_MARK = '  (baseline)';
const NAME_WIDTH = 120 - 16 - BASELINE_MARK.length;

/**
 * The runs (id and name), then their headline figures side by side (with each run's change against the
 * baseline, given one), then the scenario settings that differ; no line wider than 120 columns.
 */
export function comparisonText(runs: RunRecord[], baseline?: RunRecord): string {
  const differences = scenarioDifferences(runs.map((r) => r.scenario));
  const names = distinctNames(
    runs.map((r) => r.scenario.name),
    NAME_WIDTH,
  );
  const header = ['', ...runs.map((r) => r.id)];
  const out = [
    `runs compared:\n${runs.map((r, i) => `  ${r.id}  ${names[i]}${r === baseline ? BASELINE_MARK : ''}`).join('\n')}\n`,
  ];
  if (baseline) out.push(`changes in brackets are against the baseline run, ${baseline.id}\n`);
  out.push(fitTable([header, ...headlineRows(runs, baseline)], ['l', ...runs.map(() => 'r' as const)]));
  for (const run of runs) {
    if (run.concurrentWith) out.push(warningLines(`${run.id} ${concurrentWarning(run.concurrentWith)}`));
    // The rest of what the run's own summary warns of (its concurrent runs said above).
    const rest = storedRunCaveats(run);
    if (rest.length > 0)
      out.push(warningLines(`${run.id}: ${runCaveatsText(rest)}, so its figures are not the target's alone`));
  }
  out.push(
    differences.length === 0
      ? '\nscenario settings: identical'
      : `\nscenario settings that differ:\n${fitTable([header, ...differences.map((d) => [d.path, ...d.values])])}`,
  );
  return out.join('\n');
}
