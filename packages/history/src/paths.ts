// Where kbench keeps its files: KBENCH_HOME, or ~/.kbench.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The folder that holds the history and profiles: `$KBENCH_HOME`, or `~/.kbench`. */
export function kbenchHome(): string {
  const fromEnv = process.env.KBENCH_HOME;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : join(homedir(), '.kbench');
}

/** The history file the CLI and the server share. */
export function defaultHistoryPath(): string {
  return join(kbenchHome(), 'history.duckdb');
}
