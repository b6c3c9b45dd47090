// The official perf tools, run unmodified, with their summaries parsed into numbers.
import { KafkaToolError, tail } from './errors.js';
import { type KafkaToolResult, type LogLevel, runKafkaTool } from './java.js';
import {
  type ConsumerPerformanceSummary,
  type ProducerPerformanceSummary,
  parseConsumerPerformance,
  parseProducerPerformance,
} from './parse.js';

export interface ProducerPerformanceOptions {
  bootstrap: string;
  topic: string;
  records: number;
  recordSize: number;
  /** Records per second, or -1 (the default) for as fast as acks come back. */
  throughput?: number;
  /** Records at the start left out of the steady-state figures (the result's `steadyState`). */
  warmupRecords?: number;
  /** Producer configs, Kafka names (acks, batch.size, enable.idempotence ...); bootstrap.servers is set for you. */
  producerProps?: Record<string, string | number | boolean>;
  timeoutMs?: number;
  logLevel?: LogLevel;
}

export interface ProducerPerformanceResult extends ProducerPerformanceSummary {
  tool: KafkaToolResult;
}

/**
 * Runs org.apache.kafka.tools.ProducerPerformance; throws unless it exits 0 and prints its final summary
 * (and, given `warmupRecords`, its steady-state summary too).
 */
export async function producerPerformance(
  options: ProducerPerformanceOptions & { warmupRecords: number },
): Promise<ProducerPerformanceResult & { steadyState: ProducerPerformanceSummary }>;
export async function producerPerformance(
  options: ProducerPerformanceOptions,
): Promise<ProducerPerformanceResult>;
export async function producerPerformance(
  options: ProducerPerformanceOptions,
): Promise<ProducerPerformanceResult> {
  const props = { ...options.producerProps, 'bootstrap.servers': options.bootstrap };
  const args = [
    '--topic',
    options.topic,
    '--num-records',
    String(options.records),
    '--record-size',
    String(options.recordSize),
    '--throughput',
    String(options.throughput ?? -1),
    ...(options.warmupRecords === undefined ? [] : ['--warmup-records', String(options.warmupRecords)]),
    '--command-property',
    ...Object.entries(props).map(([key, value]) => `${key}=${value}`),
  ];
  const tool = await runKafkaTool('org.apache.kafka.tools.ProducerPerformance', args, {
    timeoutMs: options.timeoutMs ?? 10 * 60_000,
    logLevel: options.logLevel ?? 'warn',
  });
  const summary = parseProducerPerformance(tool.stdout);
  if (tool.exitCode !== 0 || summary === undefined) throw toolError('ProducerPerformance', tool);
  if (options.warmupRecords !== undefined && summary.steadyState === undefined) {
    throw toolError(
      `ProducerPerformance (no steady-state line after --warmup-records ${options.warmupRecords})`,
      tool,
    );
  }
  return { ...summary, tool };
}

export interface ConsumerPerformanceOptions {
  bootstrap: string;
  topic: string;
  /** Records to consume before stopping. */
  messages: number;
  /** Consumer group id; the tool's default is perf-consumer-<random>. */
  group?: string;
  /** The tool's own --timeout: give up after this long without a record. Default 30 s. */
  idleTimeoutMs?: number;
  consumerProps?: Record<string, string | number | boolean>;
  timeoutMs?: number;
  logLevel?: LogLevel;
}

export interface ConsumerPerformanceResult extends ConsumerPerformanceSummary {
  tool: KafkaToolResult;
}

/**
 * Runs org.apache.kafka.tools.ConsumerPerformance; throws unless it exits 0 and prints its result line.
 * When the idle timeout ends the run early the tool still succeeds: compare `messages` with what you asked.
 */
export async function consumerPerformance(
  options: ConsumerPerformanceOptions,
): Promise<ConsumerPerformanceResult> {
  const args = [
    '--bootstrap-server',
    options.bootstrap,
    '--topic',
    options.topic,
    '--num-records',
    String(options.messages),
    '--timeout',
    String(options.idleTimeoutMs ?? 30_000),
  ];
  if (options.group !== undefined) args.push('--group', options.group);
  const props = Object.entries(options.consumerProps ?? {});
  if (props.length > 0) args.push('--command-property', ...props.map(([key, value]) => `${key}=${value}`));
  const tool = await runKafkaTool('org.apache.kafka.tools.ConsumerPerformance', args, {
    timeoutMs: options.timeoutMs ?? 10 * 60_000,
    logLevel: options.logLevel ?? 'warn',
  });
  const summary = parseConsumerPerformance(tool.stdout);
  if (tool.exitCode !== 0 || summary === undefined) throw toolError('ConsumerPerformance', tool);
  return { ...summary, tool };
}

function toolError(name: string, tool: KafkaToolResult): KafkaToolError {
  const how = tool.timedOut
    ? `timed out after ${tool.durationMs} ms`
    : tool.exitCode !== 0
      ? `exited with ${tool.exitCode ?? tool.signal}`
      : 'printed no summary';
  return new KafkaToolError(
    `${name} ${how}\nstdout:\n${tail(tool.stdout)}\nstderr:\n${tail(tool.stderr)}`,
    tool.stdout,
    tool.stderr,
    tool.exitCode,
  );
}
