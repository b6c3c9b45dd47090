// Where the Apache Kafka jars are cached: KBENCH_CACHE, or $KBENCH_HOME/cache (default ~/.kbench/cache).
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The Apache Kafka release whose jars this package fetches and runs. */
export const KAFKA_VERSION = '4.3.1';

/** `$KBENCH_HOME`, or `~/.kbench` (the same rule as @kbench/history, without its DuckDB dependency). */
export function kbenchHome(): string {
  const fromEnv = process.env.KBENCH_HOME;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : join(homedir(), '.kbench');
}

/** Downloads that outlive a KBENCH_HOME: `$KBENCH_CACHE`, or `$KBENCH_HOME/cache`. */
export function kbenchCache(): string {
  const fromEnv = process.env.KBENCH_CACHE;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : join(kbenchHome(), 'cache');
}

/** `<cache>/apache-kafka-4.3.1`: holds `libs/` (the jars) and the log4j2 configuration. */
export function kafkaCacheDir(): string {
  return join(kbenchCache(), `apache-kafka-${KAFKA_VERSION}`);
}

/** This package's root (where pom.xml and java/ live), from src/ or dist/ alike. */
export function packageRoot(): string {
  return join(import.meta.dirname, '..');
}
