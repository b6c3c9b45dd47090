// GET /metrics: this server's live figures in the Prometheus text format, so a Grafana user can watch
// a run where they already look. Each run under way gives its last interval (rates, latency p50 and
// p99, errors) and its totals so far under a `run_id` label, and an info series naming its scenario;
// then the history file's size and the Node process's CPU time and memory.
import { stat } from 'node:fs/promises';
import type { LiveRun } from '@kbench/engine';
import type { Sample } from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import {
  EXPOSITION_CONTENT_TYPE,
  type PromFamily,
  type PromSeries,
  renderExposition,
} from '../prometheus.js';

/** A run's figures for the exposition: who it is and what its samples say. */
interface RunFigures {
  id: string;
  scenario: string;
  last: Sample | undefined;
  samples: Sample[];
}

const perSecond = (count: number, s: Sample) => (s.intervalMs > 0 ? (count / s.intervalMs) * 1000 : 0);

/** One series per run with a last sample, from what `pick` reads of it (null: left out). */
function lastInterval(runs: RunFigures[], pick: (s: Sample) => number | null): PromSeries[] {
  const out: PromSeries[] = [];
  for (const run of runs) {
    const value = run.last === undefined ? null : pick(run.last);
    if (value !== null) out.push({ labels: { run_id: run.id }, value });
  }
  return out;
}

/** One series per run: the sum over its samples so far. */
function totals(runs: RunFigures[], pick: (s: Sample) => number): PromSeries[] {
  return runs.map((run) => ({
    labels: { run_id: run.id },
    value: run.samples.reduce((sum, s) => sum + pick(s), 0),
  }));
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** The families of the runs under way. */
export function runFamilies(runs: RunFigures[]): PromFamily[] {
  const gauge = (name: string, help: string, series: PromSeries[]): PromFamily => ({
    name,
    type: 'gauge',
    help,
    series,
  });
  const counter = (name: string, help: string, series: PromSeries[]): PromFamily => ({
    name,
    type: 'counter',
    help,
    series,
  });
  return [
    gauge('kbench_runs_in_progress', 'Runs of this server under way now.', [{ value: runs.length }]),
    gauge(
      'kbench_run_info',
      'A run under way: its id and scenario name as labels (value 1).',
      runs.map((run) => ({ labels: { run_id: run.id, scenario: run.scenario }, value: 1 })),
    ),
    gauge(
      'kbench_run_elapsed_seconds',
      'Seconds since the run started its load (warm-up included), at its last interval.',
      lastInterval(runs, (s) => s.t),
    ),
    gauge(
      'kbench_run_warmup',
      '1 while the run is in its warm-up, else 0.',
      lastInterval(runs, (s) => (s.warmup ? 1 : 0)),
    ),
    gauge(
      'kbench_run_produced_records_per_second',
      'Records produced per second in the last interval.',
      lastInterval(runs, (s) => perSecond(s.producedRecords, s)),
    ),
    gauge(
      'kbench_run_produced_bytes_per_second',
      'Value bytes produced per second in the last interval (MB/s times 1e6).',
      lastInterval(runs, (s) => perSecond(s.producedBytes, s)),
    ),
    gauge(
      'kbench_run_consumed_records_per_second',
      'Records consumed per second in the last interval.',
      lastInterval(runs, (s) => perSecond(s.consumedRecords, s)),
    ),
    gauge(
      'kbench_run_consumed_bytes_per_second',
      'Value bytes consumed per second in the last interval.',
      lastInterval(runs, (s) => perSecond(s.consumedBytes, s)),
    ),
    gauge(
      'kbench_run_publish_latency_p50_seconds',
      'Median publish (send to ack) latency of the last interval.',
      lastInterval(runs, (s) => seconds(s.publishP50Ms)),
    ),
    gauge(
      'kbench_run_publish_latency_p99_seconds',
      '99th percentile publish latency of the last interval.',
      lastInterval(runs, (s) => seconds(s.publishP99Ms)),
    ),
    gauge(
      'kbench_run_end_to_end_latency_p50_seconds',
      'Median end-to-end (produce to consume) latency of the last interval.',
      lastInterval(runs, (s) => seconds(s.e2eP50Ms)),
    ),
    gauge(
      'kbench_run_end_to_end_latency_p99_seconds',
      '99th percentile end-to-end latency of the last interval.',
      lastInterval(runs, (s) => seconds(s.e2eP99Ms)),
    ),
    gauge(
      'kbench_run_backlog_records',
      'Records produced and not yet consumed, at the end of the last interval.',
      lastInterval(runs, (s) => s.backlog),
    ),
    counter(
      'kbench_run_produced_records_total',
      'Records produced by the run so far.',
      totals(runs, (s) => s.producedRecords),
    ),
    counter(
      'kbench_run_consumed_records_total',
      'Records consumed by the run so far.',
      totals(runs, (s) => s.consumedRecords),
    ),
    counter(
      'kbench_run_errors_total',
      'Errors the run counted so far (failed sends and fetches).',
      totals(runs, (s) => s.errors),
    ),
  ];
}

/** The history's size on disk: its DuckDB file and write-ahead log. */
async function historyBytes(path: string): Promise<number> {
  let bytes = 0;
  for (const file of [path, `${path}.wal`]) {
    bytes += await stat(file).then(
      (s) => s.size,
      () => 0,
    );
  }
  return bytes;
}

/** The Node process's own figures, under the names Prometheus' client libraries use. */
export function processFamilies(): PromFamily[] {
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  return [
    {
      name: 'process_cpu_seconds_total',
      type: 'counter',
      help: 'User and system CPU time of this process, in seconds.',
      series: [{ value: (cpu.user + cpu.system) / 1e6 }],
    },
    {
      name: 'process_resident_memory_bytes',
      type: 'gauge',
      help: 'Resident memory of this process, in bytes.',
      series: [{ value: memory.rss }],
    },
    {
      name: 'nodejs_heap_used_bytes',
      type: 'gauge',
      help: "Bytes of V8's heap in use.",
      series: [{ value: memory.heapUsed }],
    },
    {
      name: 'process_start_time_seconds',
      type: 'gauge',
      help: 'When this process started, in seconds since the Unix epoch.',
      series: [{ value: Math.round(Date.now() / 1000 - process.uptime()) }],
    },
  ];
}

function figuresOf(run: LiveRun): RunFigures {
  const samples = run.samples();
  return { id: run.id, scenario: run.scenario.name, last: samples.at(-1), samples };
}

export async function metricsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/metrics', async (_request, reply) => {
    const runs = app.runs.liveRuns().map(figuresOf);
    const families = [
      ...runFamilies(runs),
      {
        name: 'kbench_history_bytes',
        type: 'gauge',
        help: 'Size of the run history on disk (DuckDB file and write-ahead log), in bytes.',
        series: [{ value: await historyBytes(app.history.path) }],
      } satisfies PromFamily,
      ...processFamilies(),
    ];
    return reply.type(EXPOSITION_CONTENT_TYPE).send(renderExposition(families));
  });
}
