// Server-side rendering of a chart option to an SVG string, without a DOM (for the CLI's --svg/--png export).
import type { EChartsOption, GridComponentOption, LegendComponentOption } from 'echarts';
import { BarChart, HeatmapChart, LineChart } from 'echarts/charts';
import {
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapContinuousComponent,
} from 'echarts/components';
import { type ECharts, init, setPlatformAPI, use } from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';

use([
  BarChart,
  HeatmapChart,
  LineChart,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapContinuousComponent,
  SVGRenderer,
]);

export const DEFAULT_SVG_SIZE = { width: 960, height: 420 } as const;

/** Space kept free between a static chart's labels and the picture's edges, in pixels. */
const EDGE_MARGIN = 6;

/** Space between the legend's box (its padding included) and the plot, where the y axis name sits, as the charts lay it out. */
const LEGEND_TO_PLOT = 20;

/** Space between the title's text and the legend's. */
const LEGEND_BELOW_TITLE = 4;

/** Draws an option (as the chart functions make it) to a standalone SVG document string, on white unless the option sets a background. */
export function renderSvg(
  option: EChartsOption,
  size: { width: number; height: number } = DEFAULT_SVG_SIZE,
): string {
  measureTextWide();
  let drawn = { option: staticOption(option), size };
  let chart = draw(drawn.option, drawn.size);
  try {
    const grown = roomForLegend(chart, drawn.option, drawn.size);
    if (grown) {
      chart.dispose();
      drawn = grown;
      chart = draw(drawn.option, drawn.size);
    }
    return stableNames(chart.renderToSVGString(), JSON.stringify([option, size]));
  } finally {
    chart.dispose();
  }
}

function draw(option: EChartsOption, size: { width: number; height: number }): ECharts {
  const chart = init(null, null, { renderer: 'svg', ssr: true, width: size.width, height: size.height });
  chart.setOption(option);
  return chart;
}

/**
 * A picture cannot scroll: its legend is plain (every entry shown, wrapping to more rows) rather than
 * paged, and its labels are kept inside the edges (ECharts shrinks the plot to fit them).
 */
function staticOption(option: EChartsOption): EChartsOption {
  const legend = option.legend as LegendComponentOption | undefined;
  const grid = option.grid as GridComponentOption | undefined;
  return {
    backgroundColor: '#ffffff',
    ...option,
    animation: false,
    ...(legend && !Array.isArray(legend) ? { legend: { ...legend, type: 'plain' } } : {}),
    ...(grid && !Array.isArray(grid) && grid.outerBounds === undefined
      ? {
          grid: {
            ...grid,
            outerBounds: { left: EDGE_MARGIN, right: EDGE_MARGIN, top: EDGE_MARGIN, bottom: EDGE_MARGIN },
          },
        }
      : {}),
  };
}

/**
 * When the legend sits under the title's text or wraps into more rows than the plot's top margin leaves
 * room for, the same chart with the legend below the title and the plot below the legend (the picture
 * made taller by as much, so the plot keeps its size); else null.
 */
function roomForLegend(
  chart: ECharts,
  option: EChartsOption,
  size: { width: number; height: number },
): { option: EChartsOption; size: { width: number; height: number } } | null {
  const grid = option.grid as GridComponentOption | undefined;
  const legend = option.legend as LegendComponentOption | undefined;
  if (!legend || Array.isArray(legend) || typeof legend.top !== 'number') return null;
  if (!grid || Array.isArray(grid) || typeof grid.top !== 'number') return null;
  const legendBox = box(chart, 'legend');
  if (!legendBox) return null;
  const titleBox = box(chart, 'title');
  // Both boxes include their padding (5 px): keep LEGEND_BELOW_TITLE between the texts themselves.
  const down = titleBox
    ? Math.max(0, Math.ceil(titleBox.bottom - 10 + LEGEND_BELOW_TITLE - legendBox.top))
    : 0;
  const extra = Math.max(0, Math.ceil(legendBox.bottom + down + LEGEND_TO_PLOT - grid.top));
  if (down === 0 && extra === 0) return null;
  return {
    option: {
      ...option,
      legend: { ...legend, top: legend.top + down },
      grid: { ...grid, top: grid.top + extra },
    },
    size: { width: size.width, height: size.height + extra },
  };
}

/** Where a component was laid out, top and bottom in pixels, or null when the chart has none. */
function box(chart: ECharts, component: 'legend' | 'title'): { top: number; bottom: number } | null {
  // The model and its views are what echarts gives extensions (ExtensionAPI); the instance types them private.
  const internals = chart as unknown as EChartsInternals;
  const model = internals.getModel().getComponent(component);
  const group = model ? internals.getViewOfComponentModel(model)?.group : undefined;
  if (!group) return null;
  const rect = group.getBoundingRect();
  return { top: group.y + rect.y, bottom: group.y + rect.y + rect.height };
}

interface EChartsInternals {
  getModel(): { getComponent(type: string): object | undefined };
  getViewOfComponentModel(model: object): { group: LaidOutGroup } | undefined;
}

interface LaidOutGroup {
  y: number;
  getBoundingRect(): { y: number; height: number };
}

/**
 * Advance widths (hundredths of the font size) of ASCII 32..126: for each character the wider of DejaVu
 * Sans and DejaVu Serif, which are as wide as the common fonts an SVG viewer or resvg falls back to (Arial
 * and Helvetica are narrower).
 */
const WIDE_ASCII = [
  32, 40, 46, 84, 64, 95, 89, 27, 39, 39, 50, 84, 32, 36, 32, 34, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 34,
  34, 84, 84, 84, 54, 100, 72, 73, 77, 80, 73, 69, 80, 87, 40, 40, 75, 66, 102, 88, 82, 67, 82, 75, 69, 67,
  84, 72, 103, 71, 66, 69, 39, 34, 39, 84, 50, 50, 61, 64, 56, 64, 62, 37, 64, 64, 32, 31, 61, 32, 97, 64, 61,
  64, 64, 48, 52, 40, 64, 59, 86, 59, 59, 53, 64, 34, 64, 84,
];

/**
 * Without a DOM, ECharts guesses text widths from Helvetica's, narrower than the font the picture is drawn
 * in, so it left too little room and long labels ran off the edge (12,000,000 read as 2,000,000) or into
 * each other. Measuring as the wide fonts do makes every box it lays out big enough. Only renderSvg
 * (server side) installs this; a browser keeps measuring with its canvas.
 */
function measureTextWide(): void {
  setPlatformAPI({
    measureText(text: string, font?: string) {
      const size = Number(/(\d+(?:\.\d+)?)px/.exec(font ?? '')?.[1] ?? 12);
      let width = 0;
      for (const char of text ?? '') {
        const code = char.charCodeAt(0);
        width += ((code >= 32 && code <= 126 ? WIDE_ASCII[code - 32] : undefined) ?? 100) / 100;
      }
      return { width: width * size };
    },
  });
}

/**
 * zrender prefixes ids and class names with process-wide counters (zr3-c0, zr3-cls-17), so the same chart drawn
 * twice would differ. Renaming them from a hash of the input makes the output repeatable (golden files, diffs),
 * while two different charts inlined in one HTML page still get different clip-path ids.
 */
function stableNames(svg: string, input: string): string {
  const prefix = `kb${fnv1a(input)}`;
  const classes = new Map<string, number>();
  return svg
    .replace(/\bzr\d+-cls-\d+\b/g, (name) => {
      let n = classes.get(name);
      if (n === undefined) {
        n = classes.size;
        classes.set(name, n);
      }
      return `${prefix}-cls-${n}`;
    })
    .replace(/\bzr\d+-/g, `${prefix}-`);
}

/** 32-bit FNV-1a, as 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
