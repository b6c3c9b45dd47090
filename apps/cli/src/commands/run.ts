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

/** --quick: the same scenario, short enough for CI. */
export function quickVersion(raw: Record<string, unknown>, parsed: Scenario): Record<string, unknown> {
  let out = raw;
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
  const history = await History.open();
  const source = path.relative(process.cwd(), path.resolve(file));
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
      if (level === 'error' && process.env.KBENCH_DEBUG) process.stderr.write(`\n${message}\n`);
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
    if (!values.json) process.stdout.write(`\n${runHeader(record)}\n\n${summaryText(record.summary)}\n`);
  }
  if (values.json)
    process.stdout.write(`${JSON.stringify(plans.length === 1 ? results[0] : results, null, 2)}\n`);
  return results.some((r) => r.status === 'failed') ? 1 : 0;
}
