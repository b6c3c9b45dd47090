// Fetches the official Apache Kafka jars from Maven Central once per machine, under a lock.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MissingProgramError, tail } from './errors.js';
import { KAFKA_VERSION, kafkaCacheDir, packageRoot } from './paths.js';

export interface KafkaJars {
  /** A java `-cp` value: the cached libs folder with a `*` wildcard. */
  classpath: string;
  version: string;
  /** The folder that holds the jars. */
  libDir: string;
  /** A log4j2 configuration that logs to stderr at `-Dkbench.log.level` (default warn). */
  log4jConfig: string;
}

export interface EnsureKafkaJarsOptions {
  /** Defaults to kafkaCacheDir(): `$KBENCH_CACHE` or `$KBENCH_HOME/cache`, then `apache-kafka-4.3.1`. */
  cacheDir?: string;
  /** Progress lines (the fetch can take a minute on a cold machine). */
  log?: (line: string) => void;
}

const COMPLETE_MARKER = '.kbench-complete';
// A fetch that has held the lock this long is taken to be dead even if its pid was reused.
const STALE_LOCK_MS = 20 * 60_000;

const LOG4J_CONFIG = `# Written by @kbench/apache-kafka: everything at warn (or -Dkbench.log.level) on stderr, nothing on stdout.
status = error
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = \${sys:kbench.log.level:-warn}
rootLogger.appenderRef.stderr.ref = STDERR
`;

/** Java and the jars of Apache Kafka 4.3.1, fetched with Maven on first use and cached after. */
export async function ensureKafkaJars(options: EnsureKafkaJarsOptions = {}): Promise<KafkaJars> {
  const dir = options.cacheDir ?? kafkaCacheDir();
  const libDir = join(dir, 'libs');
  requireProgram(
    'java',
    ['-version'],
    'the Apache Kafka tools and broker run on a JVM',
    'apt-get install -y openjdk-17-jdk-headless',
  );
  mkdirSync(dir, { recursive: true });
  const log4jConfig = writeLog4jConfig(dir);
  const jars = { classpath: join(libDir, '*'), version: KAFKA_VERSION, libDir, log4jConfig };
  if (isComplete(libDir)) return jars;

  requireProgram(
    'mvn',
    ['-v'],
    `Maven fetches the Apache Kafka ${KAFKA_VERSION} jars from Maven Central on first use`,
    'apt-get install -y maven',
  );
  const release = await acquireLock(join(dir, 'fetch.lock'));
  try {
    // Another process may have finished the fetch while we waited for the lock.
    if (isComplete(libDir)) return jars;
    await fetchJars(libDir, options.log ?? (() => {}));
    return jars;
  } finally {
    release();
  }
}

/** The Prometheus JMX exporter's java agent, from Maven Central (not on the broker's classpath). */
export const JMX_EXPORTER_VERSION = '1.0.1';

/**
 * The exporter's configuration: the figures kbench reads (bytes in and out, under-replicated
 * partitions, produce request time quantiles) named as the exporter's Kafka example configuration
 * names them, and nothing else from JMX; the JVM's process figures (CPU) are the agent's own.
 */
export const JMX_EXPORTER_CONFIG = `# Written by @kbench/apache-kafka: what kbench's metrics scraper reads.
lowercaseOutputName: true
lowercaseOutputLabelNames: true
includeObjectNames:
  - 'kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec'
  - 'kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec'
  - 'kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions'
  - 'kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce'
rules:
  - pattern: 'kafka.server<type=BrokerTopicMetrics, name=(BytesIn|BytesOut)PerSec><>Count'
    name: kafka_server_brokertopicmetrics_$1_total
    type: COUNTER
  - pattern: 'kafka.server<type=ReplicaManager, name=UnderReplicatedPartitions><>Value'
    name: kafka_server_replicamanager_underreplicatedpartitions
    type: GAUGE
  - pattern: 'kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>(\\d+)thPercentile'
    name: kafka_network_requestmetrics_totaltimems
    type: GAUGE
    labels:
      request: Produce
      quantile: '0.$1'
`;

export interface JmxExporter {
  /** The java agent jar, for -javaagent:<jar>=<host:port>:<config>. */
  jar: string;
  /** JMX_EXPORTER_CONFIG as a file. */
  config: string;
}

/** The Prometheus JMX exporter java agent, fetched with Maven once per machine (beside the Kafka jars). */
export async function ensureJmxExporter(options: EnsureKafkaJarsOptions = {}): Promise<JmxExporter> {
  const dir = join(options.cacheDir ?? kafkaCacheDir(), 'agents');
  const jar = join(dir, `jmx_prometheus_javaagent-${JMX_EXPORTER_VERSION}.jar`);
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'jmx-exporter.yaml');
  if (!existsSync(config) || readFileSync(config, 'utf8') !== JMX_EXPORTER_CONFIG) {
    writeFileSync(`${config}.${process.pid}`, JMX_EXPORTER_CONFIG);
    renameSync(`${config}.${process.pid}`, config);
  }
  if (existsSync(jar)) return { jar, config };
  requireProgram(
    'mvn',
    ['-v'],
    'Maven fetches the Prometheus JMX exporter from Maven Central on first use',
    'apt-get install -y maven',
  );
  const release = await acquireLock(join(dir, 'fetch.lock'));
  try {
    if (existsSync(jar)) return { jar, config };
    const staging = join(dir, `staging-${process.pid}`);
    rmSync(staging, { recursive: true, force: true });
    const artifact = `io.prometheus.jmx:jmx_prometheus_javaagent:${JMX_EXPORTER_VERSION}`;
    const args = [
      '-q',
      '-B',
      '-f',
      join(packageRoot(), 'pom.xml'),
      'dependency:copy',
      `-Dartifact=${artifact}`,
      `-DoutputDirectory=${staging}`,
    ];
    (options.log ?? (() => {}))(`fetching ${artifact} with Maven into ${dir}`);
    const { code, output } = await runMaven(args);
    const fetched = join(staging, `jmx_prometheus_javaagent-${JMX_EXPORTER_VERSION}.jar`);
    if (code !== 0 || !existsSync(fetched)) {
      rmSync(staging, { recursive: true, force: true });
      throw new Error(`mvn ${args.join(' ')} failed with exit code ${code}:\n${tail(output, 30)}`);
    }
    renameSync(fetched, jar);
    rmSync(staging, { recursive: true, force: true });
    return { jar, config };
  } finally {
    release();
  }
}

function runMaven(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

function isComplete(libDir: string): boolean {
  return (
    existsSync(join(libDir, COMPLETE_MARKER)) && existsSync(join(libDir, `kafka_2.13-${KAFKA_VERSION}.jar`))
  );
}

function requireProgram(program: string, probeArgs: string[], why: string, install: string): void {
  const probe = spawnSync(program, probeArgs, { stdio: 'ignore' });
  if (probe.error) throw new MissingProgramError(program, why, install);
}

function writeLog4jConfig(dir: string): string {
  const path = join(dir, 'log4j2.properties');
  if (existsSync(path) && readFileSync(path, 'utf8') === LOG4J_CONFIG) return path;
  // Write then rename, so a JVM starting in another process never reads half a file.
  const temporary = `${path}.${process.pid}`;
  writeFileSync(temporary, LOG4J_CONFIG);
  renameSync(temporary, path);
  return path;
}

async function fetchJars(libDir: string, log: (line: string) => void): Promise<void> {
  const staging = `${libDir}.fetch-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const pom = join(packageRoot(), 'pom.xml');
  log(`fetching Apache Kafka ${KAFKA_VERSION} jars with Maven into ${libDir}`);
  const started = Date.now();
  const args = ['-q', '-B', '-f', pom, 'dependency:copy-dependencies', `-DoutputDirectory=${staging}`];
  const { code, output } = await runMaven(args);
  if (code !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`mvn ${args.join(' ')} failed with exit code ${code}:\n${tail(output, 30)}`);
  }
  writeFileSync(join(staging, COMPLETE_MARKER), `${new Date().toISOString()}\n`);
  rmSync(libDir, { recursive: true, force: true });
  renameSync(staging, libDir);
  log(`fetched Apache Kafka ${KAFKA_VERSION} jars in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** A directory lock (mkdir is atomic) holding the owner's pid; a dead owner's lock is taken over. */
async function acquireLock(path: string): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(path);
      writeFileSync(join(path, 'pid'), String(process.pid));
      return () => rmSync(path, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (lockIsStale(path)) {
      rmSync(path, { recursive: true, force: true });
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function lockIsStale(path: string): boolean {
  let ageMs: number;
  try {
    ageMs = Date.now() - statSync(path).mtimeMs;
  } catch {
    return true; // the lock went away meanwhile: try again
  }
  if (ageMs > STALE_LOCK_MS) return true;
  let pid: number;
  try {
    pid = Number(readFileSync(join(path, 'pid'), 'utf8'));
  } catch {
    return ageMs > 10_000; // the owner has just made the lock and not yet written its pid
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
