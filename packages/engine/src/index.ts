export { type Connection, createTopics, TopicExistsError } from './admin.js';
export { API_NAMES, type ApiRange, fetchApiVersions, inferVersion } from './api-versions.js';
export { AgentFleet, type AgentsSetup, agentShares, readTokenFile } from './drivers/agents.js';
export type { LoadClients, LoadDriver } from './drivers/driver.js';
export { captureEnvironment, returnsFreeMemoryToHost } from './environment.js';
export { hdrCompressedBase64, hdrIntervalLog, type LogInterval } from './hdr-log.js';
export { type HistogramBuckets, LatencyHistogram } from './histogram.js';
export { decodeHistogram, encodeHistogram } from './histogram-codec.js';
export { diskOf, type HostReading, type HostUse, hostUse, readHost, tryReadHost } from './host.js';
export type { ClientInterval } from './interval.js';
export { planRun, type RunPlan } from './plan.js';
export { defaultProfilesDir, ProfileExistsError, ProfileStore } from './profiles.js';
export { type LiveRun, newRunId, type RecordedRunOptions, startRecordedRun } from './recorded-run.js';
export { type Phase, type Progress, type RunOptions, type RunOutcome, ScenarioRun } from './run.js';
export { type ConnectionSecurity, connectionSecurity } from './security.js';
export {
  agentsLatency,
  decodeStored,
  heatmapInput,
  type IntervalHistograms,
  type LatencyWindow,
  runHeatmaps,
  runHistogramsJson,
  runHlog,
  storedIntervals,
  type WindowLatency,
  windowLatency,
} from './stored-latency.js';
export {
  assertSupported,
  type RunnablePlans,
  rateCeiling,
  runnablePlans,
  type SupportOptions,
  unsupportedIssues,
} from './supported.js';
