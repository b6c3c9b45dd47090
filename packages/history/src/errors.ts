// Errors the history throws on purpose, so callers (CLI exit codes, HTTP status codes) can tell them apart.

/** Another process kept the file locked for longer than we were willing to wait. */
export class HistoryLockedError extends Error {
  constructor(
    readonly path: string,
    readonly waitedMs: number,
    /** The process DuckDB says holds the lock, when it says. */
    readonly holder: { pid: number; program: string } | null,
  ) {
    const who = holder === null ? 'another process' : `process ${holder.pid} (${holder.program})`;
    super(
      `The run history ${path} is locked by ${who}; still locked after ${(waitedMs / 1000).toFixed(1)} s. ` +
        'Another kbench command may be stuck writing to it.',
    );
    this.name = 'HistoryLockedError';
  }
}

/** No run has this id. */
export class RunNotFoundError extends Error {
  constructor(readonly runId: string) {
    super(`No run with id ${runId} in the history`);
    this.name = 'RunNotFoundError';
  }
}

/** An id prefix that names more than one run. */
export class AmbiguousRunIdError extends Error {
  constructor(
    readonly prefix: string,
    /** Some of the ids it matches (at most 10). */
    readonly matches: string[],
  ) {
    super(`Run id prefix ${prefix} matches more than one run (${matches.join(', ')}); give more characters`);
    this.name = 'AmbiguousRunIdError';
  }
}

/** The file was written by a newer kbench whose migrations this one does not know. */
export class HistoryTooNewError extends Error {
  constructor(
    readonly path: string,
    readonly fileVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `The run history ${path} has schema version ${fileVersion}, newer than this kbench knows (${knownVersion}); upgrade kbench`,
    );
    this.name = 'HistoryTooNewError';
  }
}

/** The history's folder cannot be made: a file is in its way (KBENCH_HOME set to a file, say). */
export class HistoryFolderError extends Error {
  override name = 'HistoryFolderError';
  constructor(readonly folder: string) {
    super(
      `the history's folder ${folder} cannot be made: a file is in the way (KBENCH_HOME must name a folder, or a path where one can be made)`,
    );
  }
}
