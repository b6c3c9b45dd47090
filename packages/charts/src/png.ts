// PNG from the SVG that renderSvg draws, for Node only (the web app never imports this entry).
import { Resvg } from '@resvg/resvg-js';
import type { EChartsOption } from 'echarts';
import { DEFAULT_SVG_SIZE, renderSvg } from './svg.js';

/** Rasterises an SVG document; `width` in pixels (twice the chart's width by default, for sharp text). */
export function svgToPng(svg: string, width = DEFAULT_SVG_SIZE.width * 2): Buffer {
  const png = new Resvg(svg, {
    fitTo: { mode: 'width', value: width },
    font: { loadSystemFonts: true, defaultFontFamily: 'sans-serif' },
  });
  return png.render().asPng();
}

/** The same chart as renderSvg, as a PNG. */
export function renderPng(option: EChartsOption, size = DEFAULT_SVG_SIZE): Buffer {
  return svgToPng(renderSvg(option, size), size.width * 2);
}
