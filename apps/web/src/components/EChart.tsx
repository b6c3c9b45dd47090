// The one chart component: ECharts core with the SVG renderer, sized by its container.
import { BarChart, HeatmapChart, LineChart, ScatterChart } from 'echarts/charts';
import {
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  TitleComponent,
  ToolboxComponent,
  TooltipComponent,
  VisualMapContinuousComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { type CSSProperties, useEffect, useRef } from 'react';

echarts.use([
  LineChart,
  BarChart,
  ScatterChart,
  HeatmapChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  TitleComponent,
  DataZoomComponent,
  MarkLineComponent,
  MarkAreaComponent,
  ToolboxComponent,
  VisualMapContinuousComponent,
  SVGRenderer,
]);

export type EChartsOption = echarts.EChartsCoreOption;

export interface EChartProps {
  option: EChartsOption;
  theme?: string;
  renderer?: 'svg' | 'canvas';
  height?: number;
  className?: string;
  style?: CSSProperties;
  'data-testid'?: string;
  /** Called with the clicked item (a point's series and data name), e.g. to open the run a point is. */
  onClick?: (item: { seriesIndex?: number; name?: string }) => void;
}

/** Structural equality for chart options (plain data; functions compared by identity). */
export function sameOption(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && sameOption(ra[k], rb[k]));
}

export function EChart({
  option,
  theme,
  renderer = 'svg',
  height = 280,
  className,
  style,
  onClick,
  ...rest
}: EChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  const applied = useRef<EChartsOption | null>(null);

  // A new instance only when the theme or renderer changes.
  useEffect(() => {
    const el = container.current;
    if (!el) return;
    const instance = echarts.init(el, theme, { renderer });
    chart.current = instance;
    applied.current = null;
    const observer =
      typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(() => instance.resize());
    observer?.observe(el);
    return () => {
      observer?.disconnect();
      instance.dispose();
      chart.current = null;
      applied.current = null;
    };
  }, [theme, renderer]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new instance (theme or renderer changed) needs the option again
  useEffect(() => {
    const instance = chart.current;
    if (!instance || instance.isDisposed()) return;
    if (applied.current !== null && sameOption(applied.current, option)) return;
    instance.setOption(option, { notMerge: true });
    applied.current = option;
  }, [option, theme, renderer]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new instance (theme or renderer changed) needs the handler again
  useEffect(() => {
    const instance = chart.current;
    if (!instance || instance.isDisposed() || !onClick) return;
    instance.on('click', onClick);
    return () => {
      if (!instance.isDisposed()) instance.off('click', onClick);
    };
  }, [onClick, theme, renderer]);

  return (
    <div
      ref={container}
      className={className}
      style={{ width: '100%', height, ...style }}
      data-testid={rest['data-testid']}
    />
  );
}
