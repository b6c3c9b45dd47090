export { runsToCsv, samplesToCsv } from './csv.js';
export { AmbiguousRunIdError, HistoryLockedError, HistoryTooNewError, RunNotFoundError } from './errors.js';
export { History, type HistoryOptions, MIN_ID_PREFIX, type RunEnd, type RunFilter } from './history.js';
export { LATEST_SCHEMA_VERSION } from './migrations.js';
export { defaultHistoryPath, kbenchHome } from './paths.js';
