import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startRecordedRun } from '@kbench/engine';
import { History } from '@kbench/history';
import {
  applySet,
  expandSweep,
  formatDurationMs,
  parseDurationMs,
  parseScenario,
  parseSizeBytes,
  type RunRecord,
  readScenarioText,
  type Scenario,
  setKnob,
} from '@kbench/schema';
import { parseCommandArgs } from '../args.js';
import { runHeader, summaryText } from '../format.js';
import { ProgressLine } from '../progress.js';
import { UsageError } from '../usage.js';

const QUICK = { durationMs: 10_000, warmupMs: 2_000, records: 100_000 };
/** Sizes --quick also caps, so setup (a preloaded backlog, thousands of idle topics) stays short too. */
const QUICK_CAPS: Record<string, number> = { 'consumers.backlog': 64 * 1024 * 1024, 'topics.idle': 1000 };

/** --quick: the same scenario, short enough for CI. */
export function quickVersion(raw: Record<string, unknown>, parsed: Scenario): Record<string, unknown> {
  let out = raw;
  if (parsed.consumers.backlog > (QUICK_CAPS['consumers.backlog'] ?? 0))
    out = setKnob(out, 'consumers.backlog', QUICK_CAPS['consumers.backlog']);
  if (parsed.topics.idle > (QUICK_CAPS['topics.idle'] ?? 0))
    out = setKnob(out, 'topics.idle', QUICK_CAPS['topics.idle']);
  const cap = parsed.sweep ? QUICK_CAPS[parsed.sweep.knob] : undefined;
  if (parsed.sweep && cap !== undefined) {
    // Scaled, not clipped, so a sweep of sizes keeps its order and its distinct values.
    const sizes = parsed.sweep.values.map((v) => parseSizeBytes(v) ?? 0);
    const largest = Math.max(...sizes);
    if (largest > cap) {
      out = setKnob(
        out,
        'sweep.values',
        sizes.map((v) => Math.max(v === 0 ? 0 : 1, Math.round((v * cap) / largest))),
      );
    }
  }
  const duration = parsed.duration === undefined ? undefined : parseDurationMs(parsed.duration);
  if (duration !== undefined && duration > QUICK.durationMs)
    out = setKnob(out, 'duration', formatDurationMs(QUICK.durationMs));
  if ((parseDurationMs(parsed.warmup) ?? 0) > QUICK.warmupMs)
    out = setKnob(out, 'warmup', formatDurationMs(QUICK.warmupMs));
  if (parsed.records !== undefined && parsed.records > QUICK.records)
    out = setKnob(out, 'records', QUICK.records);
  return out;
}

/** Reads a scenario file and applies --set, --target and --quick, validating the result. */
export async function loadScenario(
  file: string,
  opts: { set?: string[]; target?: string; quick?: boolean },
): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read scenario ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  let raw = readScenarioText(text, file) as Record<string, unknown>;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    raw = raw as unknown as Record<string, unknown>;
  for (const assignment of opts.set ?? []) raw = applySet(raw, assignment);
  if (opts.target !== undefined) raw = setKnob(raw, 'target', opts.target);
  const parsed = parseScenario(raw, file);
  if (!opts.quick) return parsed;
  return parseScenario(quickVersion(raw, parsed), file);
}

/** `kbench sweep`: `run` for a scenario that must have a sweep (a series of runs). */
export function sweepCommand(argv: string[]): Promise<number> {
  return runCommand(argv, 'sweep');
}

export async function runCommand(argv: string[], command: 'run' | 'sweep' = 'run'): Promise<number> {
  const { values, positionals } = parseCommandArgs(command, argv, {
    set: { type: 'string', multiple: true },
    target: { type: 'string' },
    json: { type: 'boolean' },
    quick: { type: 'boolean' },
  });
  if (positionals.length !== 1) {
    throw new UsageError(
      `kbench ${command}: give exactly one scenario file, e.g. kbench ${command} scenarios/quickstart.yaml`,
    );
  }
  const file = positionals[0] as string;
  const scenario = await loadScenario(file, values);
  if (command === 'sweep' && !scenario.sweep) {
    throw new UsageError(`kbench sweep: ${file} has no sweep; add sweep: { knob, values } or use kbench run`);
  }
  const plans = expandSweep(scenario);
  const source = path.relative(process.cwd(), path.resolve(file));
  return report(await runPlans(plans, source, Boolean(values.json)), Boolean(values.json));
}

/** Prints the stored runs as JSON (one object, or a list for a sweep); exit 1 if any failed. */
function report(results: RunRecord[], json: boolean): number {
  if (json) process.stdout.write(`${JSON.stringify(results.length === 1 ? results[0] : results, null, 2)}\n`);
  return results.some((r) => r.status === 'failed') ? 1 : 0;
}

/** Runs resolved scenarios one after another with a progress line each; Ctrl-C stops cleanly. */
export async function runPlans(
  plans: Scenario[],
  source: string | null,
  json: boolean,
): Promise<RunRecord[]> {
  const history = await History.open();
  const results: RunRecord[] = [];
  let interrupted = false;
  for (const [i, plan] of plans.entries()) {
    if (interrupted) break;
    if (plans.length > 1) process.stderr.write(`\nsweep ${i + 1}/${plans.length}: ${plan.name}\n`);
    const run = await startRecordedRun(plan, { history, source });
    process.stderr.write(`run ${run.id}: ${plan.name} -> ${plan.target} (history: ${history.path})\n`);
    const progress = new ProgressLine();
    run.on('sample', (s) => progress.sample(s));
    run.on('progress', (p) => progress.update(p));
    run.on('log', ({ level, message }: { level: string; message: string }) => {
      if (level === 'info' || process.env.KBENCH_DEBUG) progress.note(message);
    });
    const onSignal = () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      process.stderr.write('\nstopping (Ctrl-C again to quit at once)...\n');
      run.stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const record = await run.done;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress.end();
    results.push(record);
    if (!json) process.stdout.write(`\n${runHeader(record)}\n\n${summaryText(record.summary)}\n`);
  }
  return results;
}

/** `kbench rerun <id>`: the stored, fully resolved scenario of a run, run again exactly. */
export async function rerunCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('rerun', argv, { json: { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('kbench rerun: give one run id (see kbench list)');
  const history = await History.open();
  const id = positionals[0] as string;
  const original = await history.getRun(id);
  if (!original) throw new UsageError(`kbench rerun: no run ${JSON.stringify(id)} in ${history.path}`);
  // Re-validated, so a scenario stored by an older version gets today's checks.
  const scenario = parseScenario(original.scenario, `run ${original.id}`);
  process.stderr.write(`rerunning ${original.id} (${original.scenario.name})\n`);
  return report(await runPlans([scenario], original.source, Boolean(values.json)), Boolean(values.json));
}
