import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { compareCharts, compareReportHtml, compareReportMarkdown, runLabel } from '@kbench/charts';
import type { History } from '@kbench/history';
import { concurrentWarning, type RunRecord, scenarioDifferences } from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { fmtMs, fmtNumber, table } from '../format.js';
import { writeCharts } from '../images.js';
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

function headlineRows(runs: RunRecord[]): string[][] {
  const s = runs.map((r) => r.summary);
  const row = (label: string, f: (i: number) => string) => [label, ...runs.map((_, i) => f(i))];
  return [
    row('status', (i) => runs[i]?.status ?? ''),
    row('target', (i) => {
      const env = runs[i]?.environment;
      return env?.profile ? `${env.target} (${env.profile})` : (env?.target ?? '');
    }),
    row('driver', (i) => runs[i]?.environment.driver ?? ''),
    row('produced rec/s', (i) => (s[i] ? fmtNumber(s[i].produced.recordsPerSec) : '-')),
    row('produced MB/s', (i) => (s[i] ? fmtNumber(s[i].produced.mbPerSec, 2) : '-')),
    row('consumed rec/s', (i) => (s[i] ? fmtNumber(s[i].consumed.recordsPerSec) : '-')),
    row('publish p50', (i) => fmtMs(s[i]?.publishLatencyMs?.p50)),
    row('publish p99', (i) => fmtMs(s[i]?.publishLatencyMs?.p99)),
    row('publish p99.9', (i) => fmtMs(s[i]?.publishLatencyMs?.p999)),
    row('publish max', (i) => fmtMs(s[i]?.publishLatencyMs?.max)),
    row('end-to-end p50', (i) => fmtMs(s[i]?.endToEndLatencyMs?.p50)),
    row('end-to-end p99', (i) => fmtMs(s[i]?.endToEndLatencyMs?.p99)),
    row('client cores', (i) => (s[i]?.client ? fmtNumber(s[i].client.cpuCores, 2) : '-')),
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
  });
  if (positionals.length < 2 || positionals.length > 8) {
    throw new UsageError('kbench compare: give 2 to 8 run ids (see kbench list)');
  }
  const history = await openHistory();
  const runs = await loadRuns(history, positionals, 'compare');
  const labels = runs.map(runLabel);
  const differences = scenarioDifferences(runs.map((r) => r.scenario));
  for (const [format, dir] of [
    ['svg', values.svg],
    ['png', values.png],
  ] as const) {
    if (dir === undefined) continue;
    await mkdir(dir, { recursive: true });
    const samples = await Promise.all(runs.map((r) => history.getSamples(r.id)));
    const charts = compareCharts(
      runs.map((r, i) => ({
        label: labels[i] ?? r.id,
        summary: r.summary,
        samples: samples[i] ?? [],
        scenario: r.scenario,
      })),
    );
    const files = await writeCharts(charts, path.resolve(dir), 'kbench-compare', format);
    process.stderr.write(`wrote ${files.length} ${format.toUpperCase()} charts to ${path.resolve(dir)}\n`);
  }
  if (values.report !== undefined) await writeReport(history, runs, values.report);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ runs, differences }, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`${comparisonText(runs)}\n`);
  return 0;
}

/** The headline figures side by side, then the scenario settings that differ. */
export function comparisonText(runs: RunRecord[]): string {
  const differences = scenarioDifferences(runs.map((r) => r.scenario));
  const header = ['', ...runs.map((r) => r.id)];
  const names = ['scenario', ...runs.map((r) => r.scenario.name)];
  const out = [table([header, names, ...headlineRows(runs)], ['l', ...runs.map(() => 'r' as const)])];
  for (const run of runs.filter((r) => r.concurrentWith))
    out.push(`warning: ${run.id} ${concurrentWarning(run.concurrentWith ?? [])}`);
  out.push(
    differences.length === 0
      ? '\nscenario settings: identical'
      : `\nscenario settings that differ:\n${table([['', ...runs.map((r) => r.id)], ...differences.map((d) => [d.path, ...d.values])])}`,
  );
  return out.join('\n');
}
