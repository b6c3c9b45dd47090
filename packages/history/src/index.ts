export { faultsToCsv, runsToCsv, samplesToCsv } from './csv.js';
export {
  AmbiguousRunIdError,
  HistoryFolderError,
  HistoryLockedError,
  HistoryTooNewError,
  RunNotFoundError,
} from './errors.js';
export {
  History,
  type HistoryOptions,
  type RunEnd,
  type RunFilter,
  type SampleHistograms,
} from './history.js';
export { LATEST_SCHEMA_VERSION } from './migrations.js';
export { defaultHistoryPath, kbenchHome } from './paths.js';
export {
  CONCURRENT_RUNS_DIR,
  describeHolder,
  RUN_LOCK_FILE,
  RunSlot,
  RunSlotBusyError,
  type SlotClaim,
  SlotHold,
  type SlotHolder,
  type StopResult,
} from './run-slot.js';
