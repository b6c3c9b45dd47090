// A comparison as a document: the headline figures, the settings that differ and every chart.
// HTML is self-contained (charts inline as SVG); Markdown links chart files written beside it.
import {
  concurrentWarning,
  type RunRecord,
  runCaveatsText,
  type Sample,
  scenarioDifferences,
  storedRunCaveats,
} from '@kbench/schema';
import type { ChartSpec } from './common.js';
import { compareCharts, comparedRuns } from './compare.js';
import { renderSvg } from './svg.js';

export interface ReportRun {
  run: RunRecord;
  samples: Sample[];
}

const ms = (v: number | null | undefined) =>
  v === null || v === undefined ? '-' : `${v.toFixed(v < 10 ? 2 : 1)} ms`;
const num = (v: number | null | undefined, digits = 0) =>
  v === null || v === undefined
    ? '-'
    : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function headline(runs: RunRecord[]): string[][] {
  const row = (label: string, f: (r: RunRecord) => string) => [label, ...runs.map(f)];
  return [
    ['', ...runs.map((r) => `${r.scenario.name} (${r.id})`)],
    row('status', (r) => r.status),
    row('target', (r) => `${r.environment.target} ${r.environment.bootstrap}`.trim()),
    row('driver', (r) => r.environment.driver),
    row('machine', (r) => `${r.environment.cores} cores, ${r.environment.cpuModel}`),
    row('produced rec/s', (r) => num(r.summary?.produced.recordsPerSec)),
    row('produced MB/s', (r) => num(r.summary?.produced.mbPerSec, 2)),
    row('consumed rec/s', (r) => num(r.summary?.consumed.recordsPerSec)),
    row('publish p50', (r) => ms(r.summary?.publishLatencyMs?.p50)),
    row('publish p99', (r) => ms(r.summary?.publishLatencyMs?.p99)),
    row('publish p99.9', (r) => ms(r.summary?.publishLatencyMs?.p999)),
    row('publish max', (r) => ms(r.summary?.publishLatencyMs?.max)),
    row('end-to-end p99', (r) => ms(r.summary?.endToEndLatencyMs?.p99)),
    ...(runs.some((r) => r.concurrentWith)
      ? [row('ran at the same time as', (r) => r.concurrentWith?.join(', ') ?? 'no other run')]
      : []),
  ];
}

/**
 * The warnings of runs whose figures are not those of a run alone: one for each that shared the
 * machine with another kbench run, one for each with other caveats (the client set the pace, ...).
 */
function concurrentWarnings(runs: RunRecord[]): string[] {
  return runs.flatMap((r) => {
    const rest = runCaveatsText(storedRunCaveats(r));
    return [
      ...(r.concurrentWith ? [`Warning: ${r.id} ${concurrentWarning(r.concurrentWith)}.`] : []),
      ...(rest ? [`Warning: ${r.id}: ${rest}, so its figures are not the target's alone.`] : []),
    ];
  });
}

function charts(entries: ReportRun[]): ChartSpec[] {
  return compareCharts(
    comparedRuns(
      entries.map((e) => e.run),
      entries.map((e) => e.samples),
    ),
  );
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function htmlTable(rows: string[][]): string {
  const [head, ...body] = rows;
  const cells = (r: string[], tag: string) => r.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join('');
  return `<table><thead><tr>${cells(head ?? [], 'th')}</tr></thead><tbody>${body.map((r) => `<tr>${cells(r, 'td')}</tr>`).join('')}</tbody></table>`;
}

export function compareReportHtml(entries: ReportRun[], generatedAt: string): string {
  const runs = entries.map((e) => e.run);
  const differences = scenarioDifferences(runs.map((r) => r.scenario));
  const diffRows = [['setting', ...runs.map((r) => r.id)], ...differences.map((d) => [d.path, ...d.values])];
  const figures = charts(entries)
    .map((c) => `<figure>${renderSvg(c.option)}<figcaption>${escapeHtml(c.title)}</figcaption></figure>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kbench comparison</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;color:#1e293b}table{border-collapse:collapse;margin:8px 0 20px}
th,td{border:1px solid #cbd5e1;padding:4px 10px;text-align:right}th:first-child,td:first-child{text-align:left}
figure{margin:16px 0}figcaption{color:#64748b;font-size:12px}.warning{color:#9a3412;font-weight:600}</style></head><body>
<h1>kbench comparison of ${runs.length} runs</h1>
<p>Generated ${escapeHtml(generatedAt)}. Figures cover each run's measured phase (warm-up excluded); MB = 1,048,576 bytes of values.</p>
${concurrentWarnings(runs)
  .map((w) => `<p class="warning">${escapeHtml(w)}</p>\n`)
  .join('')}<h2>Headline figures</h2>${htmlTable(headline(runs))}
<h2>Settings that differ</h2>${differences.length ? htmlTable(diffRows) : '<p>None: every scenario setting is the same.</p>'}
<h2>Charts</h2>
${figures}
</body></html>
`;
}

function mdTable(rows: string[][]): string {
  const [head, ...body] = rows;
  const line = (r: string[]) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(head ?? []), line((head ?? []).map(() => '---')), ...body.map(line)].join('\n');
}

/** Markdown, with each chart as `<prefix>-<chart id>.svg` beside the report (returned for writing). */
export function compareReportMarkdown(
  entries: ReportRun[],
  generatedAt: string,
  prefix = 'kbench-compare',
): { markdown: string; images: { file: string; svg: string }[] } {
  const runs = entries.map((e) => e.run);
  const differences = scenarioDifferences(runs.map((r) => r.scenario));
  const images = charts(entries).map((c) => ({
    file: `${prefix}-${c.id}.svg`,
    svg: renderSvg(c.option),
    title: c.title,
  }));
  const markdown = [
    `# kbench comparison of ${runs.length} runs`,
    '',
    `Generated ${generatedAt}. Figures cover each run's measured phase (warm-up excluded); MB = 1,048,576 bytes of values.`,
    '',
    ...concurrentWarnings(runs).flatMap((w) => [`> **${w}**`, '']),
    '## Headline figures',
    '',
    mdTable(headline(runs)),
    '',
    '## Settings that differ',
    '',
    differences.length
      ? mdTable([['setting', ...runs.map((r) => r.id)], ...differences.map((d) => [d.path, ...d.values])])
      : 'None: every scenario setting is the same.',
    '',
    '## Charts',
    '',
    ...images.map((i) => `![${i.title}](${i.file})\n`),
  ].join('\n');
  return { markdown, images: images.map(({ file, svg }) => ({ file, svg })) };
}
