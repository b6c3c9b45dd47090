// Runs a main class from the Apache Kafka jars in its own JVM, quietly, with a deadline.
import { spawn } from 'node:child_process';
import { ensureKafkaJars } from './jars.js';

export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

export interface RunKafkaToolOptions {
  /** Kill the JVM (SIGKILL to its process group) after this long. Default 5 minutes. */
  timeoutMs?: number;
  /** log4j root level on stderr. Default warn. */
  logLevel?: LogLevel;
  /** Extra JVM options, before the main class. Default: the heap and GC flags of Kafka's own scripts. */
  jvmArgs?: string[];
  /** Written to the tool's stdin, then closed. */
  input?: string;
  cwd?: string;
}

export interface KafkaToolResult {
  stdout: string;
  stderr: string;
  /** null when the JVM was ended by a signal (see `signal`, `timedOut`). */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
}

// What bin/kafka-run-class.sh passes (KAFKA_HEAP_OPTS for tools, KAFKA_JVM_PERFORMANCE_OPTS), so tools run as shipped.
export const TOOL_JVM_ARGS = [
  '-Xmx512m',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-Djava.awt.headless=true',
];

/** The `java` argument list for a main class with the cached classpath and the quiet log4j2 config. */
export async function javaArgs(
  mainClass: string,
  args: string[],
  jvmArgs: string[],
  logLevel: LogLevel,
): Promise<string[]> {
  const jars = await ensureKafkaJars();
  return [
    ...jvmArgs,
    `-Dlog4j2.configurationFile=${jars.log4jConfig}`,
    `-Dkbench.log.level=${logLevel}`,
    '-cp',
    jars.classpath,
    mainClass,
    ...args,
  ];
}

/** Runs `mainClass` (e.g. org.apache.kafka.tools.TopicCommand) and collects its output; never throws on a non-zero exit. */
export async function runKafkaTool(
  mainClass: string,
  args: string[],
  options: RunKafkaToolOptions = {},
): Promise<KafkaToolResult> {
  const argv = await javaArgs(mainClass, args, options.jvmArgs ?? TOOL_JVM_ARGS, options.logLevel ?? 'warn');
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  const started = Date.now();
  // Its own process group, so that a timeout kills the JVM and anything it started.
  const child = spawn('java', argv, { cwd: options.cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killGroup);
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.on('error', () => {}); // a tool that exits without reading its stdin
  child.stdin.end(options.input ?? '');
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, timeoutMs);
  try {
    const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(
      (resolve, reject) => {
        child.on('error', reject);
        child.on('close', (code, signal) => resolve([code, signal]));
      },
    );
    return { stdout, stderr, exitCode, signal, timedOut, durationMs: Date.now() - started };
  } finally {
    clearTimeout(timer);
    process.removeListener('exit', killGroup);
  }
}
