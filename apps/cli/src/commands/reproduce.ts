// `kbench reproduce <folder>|--all`: runs a published write-up's scenarios like `kbench run`
// (stored in the history) and writes a Markdown report beside our charts, one per folder.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  judge,
  measuredRun,
  type PlannedExperiment,
  PUBLISHED_FILE,
  planExperiment,
  readPublished as readPublishedFile,
  ScenarioLibrary,
  ScenarioReadError,
  type WriteUpFolder,
} from '@kbench/app';
import { type ChartSpec, compareCharts, renderSvg, runCharts } from '@kbench/charts';
import { captureEnvironment } from '@kbench/engine';
import { History, type SlotHold } from '@kbench/history';
import {
  clientPaceWarning,
  concurrentWarning,
  describeQuick,
  didYouMean,
  type Experiment,
  type MeasuredRun,
  metricLabel,
  metricValue,
  type Published,
  PublishedError,
  parseScenario,
  type RunRecord,
  rateShortfallText,
  reproductionTag,
  type Scenario,
  type Verdict,
  verdictOutcome,
} from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { fmtMs, fmtNumber } from '../format.js';
import { defaultScenariosDir } from '../paths.js';
import { withRunSlot } from '../run-slot.js';
import { scenarioLibrary } from '../scenario-file.js';
import { UsageError } from '../usage.js';
import { interrupted, runPlans } from './run.js';

const INTERRUPTED = 'the reproduction was stopped (Ctrl-C) before this experiment ran';

interface ExperimentResult {
  experiment: Experiment;
  scenario: Scenario;
  /** Why it (or some sweep values) did not run: `needs <field>: <reason>`. */
  notRun: string[];
  runs: { record: RunRecord; measured: MeasuredRun }[];
}

/** Each experiment's verdicts, judged on the runs of the whole folder. */
function verdictsOf(results: ExperimentResult[]): Verdict[][] {
  return judge(
    results.map((r) => r.experiment),
    results.flatMap((r) => r.runs.map((x) => x.measured)),
  );
}

/**
 * The folder as the workbench's library names it (`kreps-2014`, `user/mine` for one under
 * KBENCH_HOME/scenarios), so the web's reproduction page finds the runs by their tag.
 */
function libraryName(folder: string): string {
  return scenarioLibrary().nameOf(folder);
}

export async function reproduceCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('reproduce', argv, {
    all: { type: 'boolean' },
    quick: { type: 'boolean' },
    out: { type: 'string' },
    concurrent: { type: 'boolean' },
  });
  if (values.all ? positionals.length > 0 : positionals.length !== 1) {
    throw new UsageError('kbench reproduce: give one folder of scenarios/ (e.g. kreps-2014), or --all');
  }
  const folders = values.all ? allFolders() : [resolveFolder(positionals[0] as string)];
  if (folders.length === 0)
    throw new UsageError('kbench reproduce: no folder of scenarios/ has a published.yaml');
  const quick = Boolean(values.quick);
  // Quick figures must never overwrite the committed full reports.
  const outDir = path.resolve(
    values.out ??
      (quick
        ? await mkdtemp(path.join(os.tmpdir(), 'kbench-reproduce-'))
        : // The checkout's docs/reproductions, beside the scenarios/ library, from whatever folder.
          path.join(path.dirname(defaultScenariosDir()), 'docs', 'reproductions')),
  );
  const published = await Promise.all(folders.map(readPublished));
  let failed = false;
  // The whole reproduction holds the run slot: no other run slips in between two of its runs.
  const name = `${folders.map((f) => path.basename(f)).join(', ')}${quick ? ' (quick)' : ''}`;
  await withRunSlot({ command: 'kbench reproduce', name }, Boolean(values.concurrent), async (slot) => {
    for (const [i, folder] of folders.entries()) {
      const results: ExperimentResult[] = [];
      // Every run carries the tag, as the workbench's reproductions do, so its page shows this one too.
      const tag = reproductionTag(libraryName(folder), new Date(), quick);
      for (const experiment of (published[i] as Published).experiments) {
        const result = await runExperiment(folder, experiment, quick, slot, tag);
        failed ||= result.runs.some((r) => r.record.status === 'failed');
        results.push(result);
      }
      // A stopped full reproduction must not replace a committed full report with a partial one.
      const dir =
        interrupted() && !quick && values.out === undefined
          ? await mkdtemp(path.join(os.tmpdir(), 'kbench-reproduce-'))
          : outDir;
      const verdicts = verdictsOf(results);
      const file = await writeReport(dir, folder, published[i] as Published, results, verdicts, quick);
      process.stdout.write(
        `report: ${file}\n${verdictSummary(path.basename(folder), results, verdicts, quick)}`,
      );
    }
  });
  if (interrupted()) {
    process.stderr.write('stopped: the report lists the experiments that did not run\n');
    return 130;
  }
  return failed ? 1 : 0;
}

/** The write-ups of the checkout's library (folders of scenarios/ with a published.yaml). */
function libraryWriteUps(): WriteUpFolder[] {
  return new ScenarioLibrary(defaultScenariosDir()).writeUps();
}

/** Every write-up of the library. */
function allFolders(): string[] {
  return libraryWriteUps().map((w) => w.dir);
}

/** A folder path, or a write-up's library name (`kreps-2014`, `user/mine`), from any folder. */
function resolveFolder(arg: string): string {
  const found = scenarioLibrary().findWriteUp(arg);
  if (found) return found;
  const writeUps = libraryWriteUps().map((w) => w.folder);
  throw new UsageError(
    `kbench reproduce: ${JSON.stringify(arg)} is not a folder with a ${PUBLISHED_FILE} nor a write-up of the library${didYouMean(arg, writeUps)}; the library has ${writeUps.join(', ') || 'none'}`,
  );
}

async function readPublished(folder: string): Promise<Published> {
  const file = path.join(folder, PUBLISHED_FILE);
  try {
    const published = await readPublishedFile(folder, file);
    for (const e of published.experiments) {
      if (!existsSync(path.join(folder, e.scenario)))
        throw new PublishedError(
          `${file}: experiment ${JSON.stringify(e.title)} names ${e.scenario}, which is not in ${folder}`,
        );
    }
    return published;
  } catch (err) {
    if (err instanceof PublishedError) throw new UsageError(err.message);
    throw err;
  }
}

async function runExperiment(
  folder: string,
  experiment: Experiment,
  quick: boolean,
  slot: SlotHold,
  tag: string,
): Promise<ExperimentResult> {
  const file = path.join(folder, experiment.scenario);
  let planned: PlannedExperiment;
  try {
    planned = await planExperiment(folder, experiment, { quick });
  } catch (err) {
    if (err instanceof ScenarioReadError) throw new UsageError(err.message);
    throw err;
  }
  const { runnable, notRun } = planned;
  const scenario = planned.scenario as Scenario;
  // After Ctrl-C the experiments left are listed as not run, and the report says so.
  if (interrupted()) return { experiment, scenario, notRun: [INTERRUPTED], runs: [] };
  process.stderr.write(`\n== ${path.basename(folder)}: ${experiment.title} (${experiment.scenario})\n`);
  if (runnable.length === 0) {
    process.stderr.write(`not run: ${notRun.join('; ')}\n`);
    return { experiment, scenario, notRun, runs: [] };
  }
  const source = path.relative(process.cwd(), file);
  // The reproduction's tag is its series too; each run carries its sweep value as a field.
  const records = await runPlans(
    runnable.map(({ plan, value }) => ({
      scenario: plan,
      source,
      tags: [tag],
      series: tag,
      ...(value === undefined ? {} : { sweepValue: value }),
    })),
    false,
    { slot },
  );
  const history = await History.open();
  const runs = await Promise.all(
    records.map(async (record) => ({
      record,
      measured: measuredRun(experiment, record, record.sweepValue, await history.getSamples(record.id)),
    })),
  );
  return { experiment, scenario, notRun, runs };
}

function chartsFor(result: ExperimentResult): ChartSpec[] {
  const knob = result.scenario.sweep?.knob;
  if (result.runs.length === 1 && !knob) {
    const run = result.runs[0];
    return run ? runCharts(run.measured.samples, result.experiment.title) : [];
  }
  return compareCharts(
    result.runs.map((r) => ({
      label: knob ? `${knob}=${r.measured.sweepValue}` : r.record.scenario.name,
      summary: r.record.summary,
      samples: r.measured.samples,
    })),
  );
}

const stem = (file: string) => file.replace(/\.ya?ml$/, '');

function mdTable(rows: string[][]): string {
  const [head, ...body] = rows;
  const line = (r: string[]) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(head ?? []), line((head ?? []).map(() => '---')), ...body.map(line)].join('\n');
}

function figure(metric: string, value: number | null): string {
  if (value === null) return '-';
  if (metric.includes('LatencyMs.')) return fmtMs(value);
  return fmtNumber(
    value,
    metric.endsWith('mbPerSec') || metric.endsWith('MbPerSec') || metric === 'client.cpuCores' ? 2 : 0,
  );
}

function verdictLine(v: Verdict, quick: boolean): string {
  const detail = v.detail.replace(/^not checked: /, '');
  return `- Direction: ${v.says}: **${verdictOutcome(v, quick).text}** (${detail})`;
}

/** What the terminal shows after the report's path: each verdict, then the count of each outcome. */
function verdictSummary(
  name: string,
  results: ExperimentResult[],
  verdicts: Verdict[][],
  quick: boolean,
): string {
  const lines = results.flatMap((r, i) =>
    (verdicts[i] ?? []).map((v) => `  ${verdictOutcome(v, quick).text}  ${v.says} (${r.experiment.title})`),
  );
  if (lines.length === 0) return '';
  const count = (kind: string) =>
    verdicts.flat().filter((v) => verdictOutcome(v, quick).kind === kind).length;
  const of = (n: number, word: string) => `${n} ${quick ? 'indicative ' : ''}${word}${n === 1 ? '' : 'es'}`;
  return [
    '',
    `verdicts of ${name}${quick ? ' (quick run: seconds of measurement, so each is indicative only)' : ''}:`,
    ...lines,
    `${of(count('match'), 'match')}, ${of(count('mismatch'), 'mismatch')}, ${count('unchecked')} not checked`,
    '',
  ].join('\n');
}

async function writeReport(
  outDir: string,
  folder: string,
  published: Published,
  results: ExperimentResult[],
  verdicts: Verdict[][],
  quick: boolean,
): Promise<string> {
  const name = path.basename(folder);
  const chartDir = path.join(outDir, name);
  await mkdir(chartDir, { recursive: true });
  const env =
    results.flatMap((r) => r.runs)[0]?.record.environment ??
    captureEnvironment(parseScenario({}), { kind: 'bundled', bootstrap: '' });
  const versions = Object.entries(env.versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const lines: string[] = [
    `# Reproduction: ${published.title}`,
    '',
    quick
      ? `> **Quick run** (\`--quick\`: ${describeQuick()}): the figures only show that the scenarios run; seconds of measurement settle no direction, so each verdict is indicative only.`
      : '> Full run of every scenario that the engine supports today.',
    '',
    `Generated by \`kbench reproduce ${name}${quick ? ' --quick' : ''}\` on ${new Date().toISOString()}.`,
    published.url ? `Source: <${published.url}>.` : '',
    published.setup ? `Published setup: ${published.setup}` : '',
    '',
    '## Machine',
    '',
    `- ${env.cores} cores, ${env.cpuModel}`,
    `- ${fmtNumber(env.memoryBytes / 1024 ** 3, 1)} GiB memory${env.memoryNote ? `; ${env.memoryNote}` : ''}`,
    `- ${env.os}`,
    `- ${versions}`,
    '',
    'Their figures are from their hardware; what should match is the direction and rough size of each effect. MB = 1,048,576 bytes of values; our figures cover the measured phase (warm-up excluded).',
    '',
  ];
  for (const [i, result] of results.entries()) {
    const { experiment } = result;
    lines.push(
      `## ${experiment.title}`,
      '',
      `Scenario: \`${path.relative(process.cwd(), path.join(folder, experiment.scenario))}\``,
      '',
    );
    lines.push(
      mdTable([['published', 'figure'], ...Object.entries(experiment.published).map(([k, v]) => [k, v])]),
      '',
    );
    for (const reason of result.notRun) lines.push(`Not run: ${reason}`, '');
    if (result.runs.length > 0) {
      const knob = result.scenario.sweep?.knob;
      lines.push(
        mdTable([
          ['ours', 'status', ...experiment.figures.map(metricLabel)],
          ...result.runs.map((r) => [
            `${knob ? `${knob}=${r.measured.sweepValue}` : 'run'} (${r.record.id})`,
            r.record.status +
              (r.record.error ? `: ${r.record.error}` : '') +
              (r.record.concurrentWith ? `; ${concurrentWarning(r.record.concurrentWith)}` : '') +
              paceNotes(r.record),
            ...experiment.figures.map((m) => figure(m, metricValue(r.record.summary, m))),
          ]),
        ]),
        '',
      );
      const prefix = stem(experiment.scenario);
      for (const chart of chartsFor(result)) {
        const file = `${prefix}-${chart.id}.svg`;
        await writeFile(path.join(chartDir, file), renderSvg(chart.option));
        lines.push(`![${chart.title}](${name}/${file})`, '');
      }
    }
    for (const v of verdicts[i] ?? []) lines.push(verdictLine(v, quick));
    if (experiment.checks.length > 0) lines.push('');
    if (experiment.note) lines.push(`Note: ${experiment.note}`, '');
  }
  const file = path.join(outDir, `${name}.md`);
  await writeFile(
    file,
    `${lines
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd()}\n`,
  );
  return file;
}

/** What set a run's pace besides the target, for its status cell: a rate not reached, a busy client. */
function paceNotes(record: RunRecord): string {
  if (!record.summary) return '';
  const notes = [
    rateShortfallText(record.scenario, record.summary),
    clientPaceWarning(record.summary.client) ? 'the client set the pace' : null,
  ].filter((n) => n !== null);
  return notes.map((n) => `; ${n}`).join('');
}
