// npm run bench:gate -w @kbench/bench: how often the regression gate cries wolf, and how small a
// slowdown it catches. The quickstart workload on the native driver (one producer at rate: max, one consumer) on
// the bundled broker: a baseline of REPEATS runs, then RERUNS sets of REPEATS unchanged runs, each set
// judged against the baseline by the gate's rule at its defaults (@kbench/schema's judge, 10%, the
// default metrics), and each of those runs alone as a single-run gate; then, for each slowdown, REPEATS
// runs with the producer held to that fraction of the baseline's mean rate. Writes the "gate" section
// of docs/benchmarks.md. Not part of `npm run bench` (it takes long): `npm run bench:gate -w @kbench/bench`.
import os from 'node:os';
import { ScenarioRun } from '@kbench/engine';
import {
  DEFAULT_GATE_METRIC_NAMES,
  type Judgement,
  judge,
  metricNamed,
  parseScenario,
  type RunSummary,
  runMetricValue,
} from '@kbench/schema';
import { BENCHMARKS_DOC, fixed, int, replaceSection } from './doc.js';
import { holdBenchSlot } from './slot.js';

const env = process.env;
const REPEATS = Number(env.KBENCH_BENCH_GATE_REPEATS ?? 5);
const RERUNS = Number(env.KBENCH_BENCH_GATE_RERUNS ?? 20);
const DURATION = env.KBENCH_BENCH_DURATION ?? '10s';
const WARMUP = env.KBENCH_BENCH_WARMUP ?? '2s';
const SLOWDOWNS = (env.KBENCH_BENCH_GATE_SLOWDOWNS ?? '5,10,12.5,15,20,30').split(',').map(Number);
const THRESHOLD = 10;
/** The detection part's producer rate (records/s): held, well below what the machine can do. */
const HELD_RATE = Number(env.KBENCH_BENCH_GATE_RATE ?? 200_000);
const RATE_METRIC = 'produced.recordsPerSec';
const log = (line: string) => process.stderr.write(`[bench gate] ${line}\n`);
const loads: number[] = [];
let runNumber = 0;
let retries = 0;

/** One run of quickstart's workload, at `rate: max` or at a fixed rate. */
async function measure(label: string, rate: number | 'max'): Promise<RunSummary> {
  const scenario = parseScenario({
    name: 'quickstart',
    target: 'bundled',
    driver: 'native',
    topics: { count: 1, partitions: 3 },
    producers: { count: 1, acks: 1, messageSize: 100, rate },
    consumers: { count: 1, startAt: 'latest' },
    duration: DURATION,
    warmup: WARMUP,
  });
  loads.push(os.loadavg()[0] ?? 0);
  let outcome = await new ScenarioRun(scenario, { runId: `benchgate${runNumber++}` }).execute();
  if (outcome.status !== 'completed') {
    // Once, after a pause: on a shared machine a rebuild of the engine can pull files from under a run.
    log(`${label} failed (${outcome.error}); once more in 10 s`);
    retries++;
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    outcome = await new ScenarioRun(scenario, { runId: `benchgate${runNumber++}` }).execute();
  }
  if (outcome.status !== 'completed' || !outcome.summary)
    throw new Error(`${label} run failed: ${outcome.error}`);
  const s = outcome.summary;
  log(
    `${label}: ${int(s.produced.recordsPerSec)} rec/s, publish p99 ${s.publishLatencyMs?.p99 ?? '-'} ms, e2e p99 ${s.endToEndLatencyMs?.p99 ?? '-'} ms`,
  );
  return s;
}

async function repeats(label: string, rate: number | 'max'): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  for (let i = 0; i < REPEATS; i++) out.push(await measure(`${label} ${i + 1}/${REPEATS}`, rate));
  return out;
}

function values(runs: RunSummary[], name: string): number[] {
  const metric = metricNamed(name);
  return runs.map((s) => runMetricValue(metric, s)).filter((v): v is number => v !== null);
}

/** The gate at its defaults: each default metric the baseline has, 10%. */
function gate(
  baseline: RunSummary[],
  current: RunSummary[],
  metrics: readonly string[],
): Map<string, Judgement> {
  const out = new Map<string, Judgement>();
  for (const name of metrics)
    out.set(name, judge(metricNamed(name).better, values(baseline, name), values(current, name), THRESHOLD));
  return out;
}

const regressed = (j: Map<string, Judgement>) =>
  [...j].filter(([, v]) => v.verdict === 'regression').map(([k]) => k);

function pText(j: Judgement | undefined): string {
  if (!j || j.pValue === null) return '-';
  return j.pValue < 0.0001 ? '<0.0001' : fixed(j.pValue, 4);
}

async function main(): Promise<void> {
  holdBenchSlot('npm run bench:gate');
  const started = Date.now();
  const baseline = await repeats('baseline', 'max');
  const metrics = DEFAULT_GATE_METRIC_NAMES.filter((n) => values(baseline, n).length === baseline.length);

  // Unchanged reruns: a set of REPEATS judged as one, and each of its runs alone.
  const setAlarms: string[][] = [];
  const singleAlarms: string[][] = [];
  const cvs: Record<string, number[]> = {};
  for (let r = 0; r < RERUNS; r++) {
    const set = await repeats(`rerun ${r + 1}/${RERUNS}`, 'max');
    const judged = gate(baseline, set, metrics);
    for (const [name, j] of judged) {
      const cv = j.current?.cv;
      if (cv !== null && cv !== undefined) cvs[name] = [...(cvs[name] ?? []), cv];
    }
    setAlarms.push(regressed(judged));
    for (const run of set) singleAlarms.push(regressed(gate(baseline, [run], metrics)));
    log(`rerun ${r + 1}: ${setAlarms.at(-1)?.join(', ') || 'passed'}`);
  }

  // Slowdowns: against a baseline held to HELD_RATE, the producer held to (100 - x)% of it. (Held
  // near the closed loop's rate it would queue behind every stall of a busy machine instead.)
  const heldBaseline = await repeats(`held baseline at ${int(HELD_RATE)} rec/s`, HELD_RATE);
  const heldMetrics = DEFAULT_GATE_METRIC_NAMES.filter(
    (n) => values(heldBaseline, n).length === heldBaseline.length,
  );
  const heldCv = gate(heldBaseline, heldBaseline, [RATE_METRIC]).get(RATE_METRIC)?.baseline?.cv ?? null;
  const detection: { slowdown: number; rate: number; judgement: Judgement | undefined; alarms: string[] }[] =
    [];
  for (const slowdown of SLOWDOWNS) {
    const rate = Math.round(HELD_RATE * (1 - slowdown / 100));
    const judged = gate(heldBaseline, await repeats(`slowdown ${slowdown}%`, rate), heldMetrics);
    detection.push({ slowdown, rate, judgement: judged.get(RATE_METRIC), alarms: regressed(judged) });
  }

  const falseSets = setAlarms.filter((a) => a.length > 0).length;
  const falseSingles = singleAlarms.filter((a) => a.length > 0).length;
  const detected = detection.filter((d) => d.alarms.includes(RATE_METRIC)).map((d) => d.slowdown);
  const smallest = detected.length > 0 ? `${Math.min(...detected)}%` : 'none of those tried';
  const alarmCounts = metrics.map((m) => `${m} ${setAlarms.filter((a) => a.includes(m)).length}`).join(', ');
  const cvRows = metrics.map((m) => {
    const list = cvs[m] ?? [];
    return `| \`${m}\` | ${list.length === 0 ? '-' : `${fixed(Math.min(...list) * 100, 1)}% to ${fixed(Math.max(...list) * 100, 1)}%`} |`;
  });
  const detectionRows = detection.map(
    (d) =>
      `| ${d.slowdown}% | ${int(d.rate)} | ${d.judgement?.changePercent == null ? '-' : `${fixed(d.judgement.changePercent, 1)}%`} | ${pText(d.judgement)} | ${d.judgement?.verdict ?? '-'} | ${d.alarms.join(', ') || 'none'} |`,
  );
  const reduced =
    RERUNS !== 20 || REPEATS !== 5 || DURATION !== '10s'
      ? `\n**A reduced run**: ${RERUNS} reruns of ${REPEATS} runs of ${DURATION} (the full benchmark is 20 reruns of 5 runs of 10 s).\n`
      : '';
  replaceSection(
    BENCHMARKS_DOC,
    'gate',
    `## The regression gate: false alarms and the smallest slowdown it catches

\`npm run bench:gate -w @kbench/bench\` (bench/src/gate.ts). The quickstart workload on the native driver (1 producer
at \`rate: max\`, 100 B, acks=1, 1 consumer, 3 partitions) on the bundled broker, ${DURATION} after ${WARMUP}
warm-up, a fresh broker per run. False alarms: a baseline of ${REPEATS} runs; then ${RERUNS} unchanged reruns
of ${REPEATS} runs each, every set judged against the baseline by the gate's rule at its defaults
(\`--max-regression 10%\`, the default metrics the baseline has: ${metrics.map((m) => `\`${m}\``).join(', ')}),
and every one of those ${RERUNS * REPEATS} runs alone against the baseline too (\`kbench gate <run>\`: the
baseline's 95% prediction interval). Slowdowns: the same workload with the producer held to
${int(HELD_RATE)} rec/s (open loop, well below the closed loop's rate, so that the machine holds it), a
baseline of ${REPEATS} runs (CV of its rate ${heldCv === null ? '-' : `${fixed(heldCv * 100, 2)}%`}), then for each slowdown ${REPEATS} runs with
the producer held to that fraction of it, judged the same way: the gate's test of a producer
rate-limited by x%.
${reduced}
**False alarms: ${falseSets} of ${RERUNS} unchanged reruns of ${REPEATS} (by metric: ${alarmCounts}); ${falseSingles} of ${singleAlarms.length} single runs.**
**Smallest slowdown caught with ${REPEATS} repeats: ${smallest}** (produced rec/s; the threshold is 10%).

| slowdown | rate held to (rec/s) | change in produced rec/s | p (Welch) | verdict | metrics that regressed |
|---|---|---|---|---|---|
${detectionRows.join('\n')}

The spread of the reruns (coefficient of variation of each set of ${REPEATS}):

| metric | CV, lowest to highest |
|---|---|
${cvRows.join('\n')}

A held rate is an open loop: when the machine stalls, records queue behind it, so the latencies of a
slowdown row can regress too (its last column); the smallest slowdown is read from produced rec/s.
The 1-minute load average before the runs was ${fixed(Math.min(...loads), 1)} to ${fixed(Math.max(...loads), 1)} on ${os.cpus().length} cores
(shared with other work). ${runNumber} runs (${retries} of them a failed run's retry) in ${fixed((Date.now() - started) / 60000, 1)} min, measured ${new Date().toISOString()}.`,
  );
  log(`wrote the gate section of ${BENCHMARKS_DOC}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
