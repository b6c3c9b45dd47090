// @kbench/app: what the CLI and the server both do, each as a thin adapter over it.
export {
  judge,
  measuredRun,
  type PlannedExperiment,
  type PlanOptions,
  PUBLISHED_FILE,
  planExperiment,
  planWriteUp,
  readPublished,
} from './reproduction.js';
export {
  loadScenarioFile,
  rawScenario,
  resolveScenario,
  type ScenarioOverrides,
  ScenarioReadError,
  ShortenedScenarioError,
} from './scenario-file.js';
export {
  type LibraryFile,
  LibraryPathError,
  SCENARIO_EXTENSIONS,
  ScenarioFolderError,
  ScenarioLibrary,
  UnknownScenarioError,
  USER_PREFIX,
  type WriteUpFolder,
} from './scenario-library.js';
export {
  newSeriesId,
  repeatSeries,
  runSeries,
  type SeriesItem,
  type SeriesOptions,
  type SeriesOutcome,
  sweepSeries,
  withRunSlot,
} from './series.js';
export { loadTrend, TrendError, type TrendRequest } from './trend.js';
