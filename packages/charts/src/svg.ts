// Server-side rendering of a chart option to an SVG string, without a DOM (for the CLI's --svg/--png export).
import type { EChartsOption } from 'echarts';
import { BarChart, LineChart } from 'echarts/charts';
import {
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  TitleComponent,
  TooltipComponent,
} from 'echarts/components';
import { init, use } from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';

use([
  BarChart,
  LineChart,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  TitleComponent,
  TooltipComponent,
  SVGRenderer,
]);

export const DEFAULT_SVG_SIZE = { width: 960, height: 420 } as const;

/** Draws an option (as the chart functions make it) to a standalone SVG document string, on white unless the option sets a background. */
export function renderSvg(
  option: EChartsOption,
  size: { width: number; height: number } = DEFAULT_SVG_SIZE,
): string {
  const chart = init(null, null, { renderer: 'svg', ssr: true, width: size.width, height: size.height });
  try {
    chart.setOption({ backgroundColor: '#ffffff', ...option, animation: false });
    return stableNames(chart.renderToSVGString(), JSON.stringify([option, size]));
  } finally {
    chart.dispose();
  }
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
