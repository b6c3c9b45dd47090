export type { LoadClients, LoadDriver } from './drivers/driver.js';
export { captureEnvironment } from './environment.js';
export { type HistogramBuckets, LatencyHistogram } from './histogram.js';
export type { ClientInterval } from './interval.js';
export { type LiveRun, newRunId, type RecordedRunOptions, startRecordedRun } from './recorded-run.js';
export { type Phase, type Progress, type RunOptions, type RunOutcome, ScenarioRun } from './run.js';
export { assertSupported, unsupportedIssues } from './supported.js';
