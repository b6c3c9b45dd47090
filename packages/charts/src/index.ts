export {
  backlogChart,
  bandwidthChart,
  faultMarks,
  latencyChart,
  machineCpuChart,
  machineDiskChart,
  runCharts,
  storedDataChart,
  throughputChart,
} from './charts.js';
export {
  type ChartSpec,
  FAULT_BAND,
  type FaultMark,
  PALETTE,
  type RunSeries,
  WARMUP_SHADE,
} from './common.js';
export {
  compareCharts,
  comparedRuns,
  knobChart,
  percentileLadderChart,
  publishP99Chart,
  type RunResult,
  recordsPerSecChart,
  runLabels,
} from './compare.js';
export { type HeatmapInput, heatmapCharts, latencyHeatmapChart, type RunHeatmapInputs } from './heatmap.js';
export { compareReportHtml, compareReportMarkdown, type ReportRun } from './report.js';
export { DEFAULT_SVG_SIZE, renderSvg } from './svg.js';
export { changeLabel, changeMarkLabel, trendChart, trendChartId, trendCharts } from './trend.js';
