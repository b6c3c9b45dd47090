// `kbench trend <scenario> [--target T] [--metric M] [--json] [--svg DIR] [--png DIR]`: a scenario's completed runs on one
// target, each headline figure run by run, with its change points and best run (as GET /api/trends).
import { loadTrend, TrendError } from '@kbench/app';
import { trendCharts } from '@kbench/charts';
import { History } from '@kbench/history';
import { TREND_METRICS, type Trend, type TrendMetric, type TrendSeries } from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { fitTable, fmtMs, fmtNumber } from '../format.js';
import { writeChartFolders } from '../images.js';
import { UsageError } from '../usage.js';

/** Marks a run that shared the machine, and one whose load thread set the pace. */
const SHARED_MARK = '*';
const PACED_MARK = 'c';
const BEST_MARK = '<';

export async function trendCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('trend', argv, {
    target: { type: 'string' },
    metric: { type: 'string' },
    'sweep-value': { type: 'string' },
    json: { type: 'boolean' },
    svg: { type: 'string' },
    png: { type: 'string' },
  });
  if (positionals.length !== 1)
    throw new UsageError(
      'kbench trend: give one scenario name, as kbench list shows it (quote it if it has spaces)',
    );
  const metric = values.metric;
  if (metric !== undefined && !(TREND_METRICS as readonly string[]).includes(metric)) {
    throw new UsageError(
      `kbench trend: --metric must be one of ${TREND_METRICS.join(', ')} (got ${JSON.stringify(metric)})`,
    );
  }
  const history = await History.open();
  let trend: Trend;
  try {
    trend = await loadTrend(history, {
      scenario: positionals[0] as string,
      ...(values.target ? { target: values.target } : {}),
      ...(metric ? { metrics: [metric as TrendMetric] } : {}),
      ...(values['sweep-value'] ? { sweepValue: values['sweep-value'] } : {}),
    });
  } catch (err) {
    if (err instanceof TrendError) throw new UsageError(`kbench trend: ${err.message}`);
    throw err;
  }
  await writeChartFolders(values, 'kbench', () => trendCharts(trend));
  process.stdout.write(values.json ? `${JSON.stringify(trend, null, 2)}\n` : `${trendText(trend)}\n`);
  return 0;
}

function figure(series: TrendSeries, value: number | null): string {
  if (value === null) return '-';
  if (series.unit === 'ms') return fmtMs(value);
  return fmtNumber(value, series.unit === 'MB/s' ? 2 : 0);
}

function trendText(trend: Trend): string {
  const { runs, series } = trend;
  const rows = [
    ['run', 'started', ...series.map((s) => s.label)],
    ...runs.map((run, i) => {
      const marks = `${run.concurrentWith || run.machineShared ? SHARED_MARK : ''}${run.clientPaced ? PACED_MARK : ''}`;
      return [
        `${run.id}${marks ? ` ${marks}` : ''}`,
        run.startedAt.replace('T', ' ').slice(0, 16),
        ...series.map((s) => {
          const value = figure(s, s.values[i] ?? null);
          return s.best?.runId === run.id ? `${value} ${BEST_MARK}` : `${value}  `;
        }),
      ];
    }),
  ];
  const table = fitTable(rows, ['l', 'l', ...series.map(() => 'r' as const)]);
  const changes = series.flatMap((s) =>
    s.changePoints.map((c) => {
      const percent =
        c.changePercent === null ? '' : `, ${c.changePercent >= 0 ? '+' : ''}${c.changePercent.toFixed(1)}%`;
      return `  ${s.label} at ${c.runId}: ${figure(s, c.before)} -> ${figure(s, c.after)}${percent}, ${c.verdict} (p = ${c.pValue.toFixed(3)})`;
    }),
  );
  const notes = [
    `${BEST_MARK} best run alone on the machine (${series.map((s) => `${s.label}: ${s.better}`).join('; ')} is better)`,
    ...(runs.some((r) => r.concurrentWith || r.machineShared)
      ? [
          `${SHARED_MARK} shared the machine with another run or busy processes: left out of change points and the best (beside busy processes, only while other runs had a quiet machine)`,
        ]
      : []),
    ...(runs.some((r) => r.clientPaced) ? [`${PACED_MARK} the client, not the target, set the pace`] : []),
  ];
  return [
    `trend of "${trend.scenario}"${trend.sweepValue === undefined ? '' : ` at sweep value ${trend.sweepValue}`} on ${trend.target}: ${runs.length} completed run${runs.length === 1 ? '' : 's'}, oldest first`,
    '',
    table,
    '',
    changes.length > 0
      ? `change points (e-divisive means):\n${changes.join('\n')}`
      : 'change points (e-divisive means): none',
    '',
    notes.join('\n'),
  ].join('\n');
}
