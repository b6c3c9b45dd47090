// Chart files for export: the same ECharts options the web app draws (packages/charts), rendered
// to SVG on the server, and rasterised to PNG from that SVG.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type ChartSpec, renderSvg } from '@kbench/charts';
import { svgToPng } from '@kbench/charts/png';

const SIZE = { width: 960, height: 420 };

/** Writes each chart as `<prefix>-<chart id>.<format>` into `dir`; returns the paths. */
export async function writeCharts(
  charts: ChartSpec[],
  dir: string,
  prefix: string,
  format: 'svg' | 'png',
): Promise<string[]> {
  const written: string[] = [];
  for (const chart of charts) {
    const svg = renderSvg(chart.option, SIZE);
    const file = path.join(dir, `${prefix}-${chart.id}.${format}`);
    await writeFile(file, format === 'svg' ? svg : svgToPng(svg));
    written.push(file);
  }
  return written;
}

/**
 * Writes the charts into the folder given for each format (`--svg DIR`, `--png DIR`), creating it,
 * and says so on stderr; `charts` is only called when a folder is given.
 */
export async function writeChartFolders(
  folders: { svg?: string | undefined; png?: string | undefined },
  prefix: string,
  charts: () => Promise<ChartSpec[]> | ChartSpec[],
): Promise<void> {
  for (const format of ['svg', 'png'] as const) {
    const dir = folders[format];
    if (dir === undefined) continue;
    await mkdir(dir, { recursive: true });
    const files = await writeCharts(await charts(), path.resolve(dir), prefix, format);
    process.stderr.write(`wrote ${files.length} ${format.toUpperCase()} charts to ${path.resolve(dir)}\n`);
  }
}
