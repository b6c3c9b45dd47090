import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { compareCharts, comparedRuns, faultMarks, heatmapCharts, runCharts } from '@kbench/charts';
import { runHeatmaps, runHistogramsJson, runHlog, storedIntervals } from '@kbench/engine';
import { faultsToCsv, runsToCsv, samplesToCsv } from '@kbench/history';
import type { RunListItem, RunRecord } from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { writeCharts } from '../images.js';
import { runToOmbResult } from '../omb-export.js';
import { openHistory } from '../open-history.js';
import { UsageError } from '../usage.js';
import { loadRuns } from './compare.js';

function listItem(run: RunRecord): RunListItem {
  const { scenario, environment, ...rest } = run;
  return { ...rest, name: scenario.name, target: environment.target, driver: environment.driver };
}

const FORMATS = ['csv', 'svg', 'png', 'json', 'omb', 'hlog', 'histograms-json'] as const;
type Format = (typeof FORMATS)[number];

export async function exportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('export', argv, {
    csv: { type: 'boolean' },
    svg: { type: 'boolean' },
    png: { type: 'boolean' },
    json: { type: 'boolean' },
    omb: { type: 'boolean' },
    hlog: { type: 'boolean' },
    'histograms-json': { type: 'boolean' },
    format: { type: 'string', multiple: true },
    out: { type: 'string' },
  });
  const named = (values.format ?? []).flatMap((f) => f.split(',')).map((f) => f.trim());
  for (const f of named)
    if (!(FORMATS as readonly string[]).includes(f))
      throw new UsageError(
        `kbench export: --format ${JSON.stringify(f)} is not one of ${FORMATS.join(', ')}`,
      );
  const formats = FORMATS.filter((f: Format) => values[f] === true || named.includes(f));
  if (positionals.length === 0)
    throw new UsageError('kbench export: give one or more run ids (see kbench list)');
  if (formats.length === 0)
    throw new UsageError(
      'kbench export: choose at least one of --csv, --svg, --png, --json, --omb, --hlog, --histograms-json (or --format F)',
    );
  const dir = path.resolve(values.out ?? '.');
  await mkdir(dir, { recursive: true });
  const history = await openHistory();
  const runs = await loadRuns(history, positionals, 'export');
  const samples = await Promise.all(runs.map((r) => history.getSamples(r.id)));
  const intervals = await storedIntervals(
    history,
    runs.map((r) => r.id),
  );
  const written: string[] = [];
  const write = async (name: string, content: string | Buffer) => {
    const file = path.join(dir, name);
    await writeFile(file, content);
    written.push(file);
  };
  for (const format of formats) {
    if (format === 'csv') {
      for (const [i, run] of runs.entries()) {
        await write(`kbench-${run.id}-samples.csv`, samplesToCsv(samples[i] ?? []));
        if (run.faults && run.faults.length > 0)
          await write(`kbench-${run.id}-faults.csv`, faultsToCsv(run.faults));
      }
      await write(
        runs.length === 1 ? `kbench-${runs[0]?.id}-summary.csv` : 'kbench-runs-summary.csv',
        runsToCsv(runs.map(listItem)),
      );
    } else if (format === 'json') {
      for (const [i, run] of runs.entries()) {
        await write(
          `kbench-${run.id}.json`,
          `${JSON.stringify({ ...run, samples: samples[i] ?? [] }, null, 2)}\n`,
        );
      }
    } else if (format === 'hlog') {
      for (const [i, run] of runs.entries())
        await write(`kbench-${run.id}.hlog`, runHlog(run, intervals[i] ?? []));
    } else if (format === 'histograms-json') {
      for (const [i, run] of runs.entries())
        await write(
          `kbench-${run.id}-histograms.json`,
          `${JSON.stringify(runHistogramsJson(run, intervals[i] ?? []))}\n`,
        );
    } else if (format === 'omb') {
      for (const [i, run] of runs.entries())
        await write(
          `kbench-${run.id}-omb.json`,
          `${JSON.stringify(runToOmbResult(run, samples[i] ?? []), null, 2)}\n`,
        );
    } else if (runs.length === 1) {
      const run = runs[0] as RunRecord;
      written.push(
        ...(await writeCharts(
          [
            ...runCharts(samples[0] ?? [], run.scenario.name, faultMarks(run), run.id),
            ...heatmapCharts([{ label: run.scenario.name, id: run.id, ...runHeatmaps(intervals[0] ?? []) }]),
          ],
          dir,
          `kbench-${run.id}`,
          format,
        )),
      );
    } else {
      const charts = [
        ...compareCharts(comparedRuns(runs, samples)),
        ...heatmapCharts(
          runs.map((run, i) => ({
            label: run.scenario.name,
            id: run.id,
            ...runHeatmaps(intervals[i] ?? []),
          })),
        ),
      ];
      written.push(...(await writeCharts(charts, dir, 'kbench-compare', format)));
    }
  }
  process.stdout.write(`${written.join('\n')}\n`);
  return 0;
}
