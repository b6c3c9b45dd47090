// Why a run's figures may not be the target's alone, in short words: wherever runs are compared or
// judged (the gate, compare, trends), beside the run's id. The run's own page and summary carry the
// long warnings (run-text.ts); these say the same in a line.
import { type AgentsRun, agentLossWarning } from './agents.js';
import type { RunRecord, RunSummary } from './run.js';
import { busyThreads, machineShareWarning, type PacedScenario, rateShortfall } from './run-text.js';

export const RUN_CAVEAT_KINDS = [
  'concurrent',
  'machine-shared',
  'client-paced',
  'rate-short',
  'agent-lost',
] as const;
export type RunCaveatKind = (typeof RUN_CAVEAT_KINDS)[number];

export interface RunCaveat {
  kind: RunCaveatKind;
  /** `the client set the pace (producer thread 97% busy)` */
  text: string;
}

/** What runCaveats reads of a run: a stored record or a list item (which has no scenario or agents). */
export interface CaveatedRun {
  summary: RunSummary | null;
  concurrentWith?: readonly string[] | undefined;
  /** For the rate asked; without it a shortfall cannot be told. */
  scenario?: PacedScenario | undefined;
  /** `environment.agents`, for an agent lost during the run. */
  agents?: AgentsRun | undefined;
}

const whole = (x: number) => Math.round(x).toLocaleString('en-US');

/**
 * Each reason the run's figures are not the target's alone: it shared the machine with other kbench
 * runs or with other busy processes, its client set the pace, its producers fell short of the rate
 * asked, or it lost an agent and went on. Empty for a run alone on its machine that ran as asked.
 */
export function runCaveats(run: CaveatedRun): RunCaveat[] {
  const out: RunCaveat[] = [];
  const others = run.concurrentWith ?? [];
  if (others.length > 0)
    out.push({
      kind: 'concurrent',
      text: `shared the machine with ${others.length === 1 ? 'run' : 'runs'} ${others.join(', ')}`,
    });
  const summary = run.summary;
  if (summary && machineShareWarning(summary, others) !== null && summary.machine) {
    const m = summary.machine;
    out.push({
      kind: 'machine-shared',
      text: `something besides this run kept ${(m.othersCores ?? 0).toFixed(1)} of the machine's ${m.cores} cores busy`,
    });
  }
  const busy = busyThreads(summary?.client);
  if (busy.length > 0)
    out.push({ kind: 'client-paced', text: `the client set the pace (${busy.join(', ')})` });
  const short = summary && run.scenario ? rateShortfall(run.scenario, summary) : null;
  if (short)
    out.push({
      kind: 'rate-short',
      text: `reached ${whole(short.reached)} of the ${whole(short.asked)} records/s asked`,
    });
  if (agentLossWarning(run.agents) !== null) {
    const lost = (run.agents?.agents ?? []).filter((a) => a.lostAtMs !== null);
    out.push({
      kind: 'agent-lost',
      text: `lost ${lost.map((a) => `agent ${a.name} at ${((a.lostAtMs ?? 0) / 1000).toFixed(1)} s`).join(', ')} and went on without ${lost.length === 1 ? 'it' : 'them'}`,
    });
  }
  return out;
}

/**
 * A stored run's caveats other than its concurrent kbench runs, which have their own, longer warning
 * wherever runs are shown (concurrentWarning): the compare views add these beside it.
 */
export function storedRunCaveats(run: Pick<RunRecord, 'summary' | 'scenario' | 'environment'>): RunCaveat[] {
  return runCaveats({ summary: run.summary, scenario: run.scenario, agents: run.environment.agents });
}

/** A run's caveats in a line, `the client set the pace (...); shared the machine with run ab12`, or null. */
export function runCaveatsText(caveats: readonly RunCaveat[]): string | null {
  return caveats.length === 0 ? null : caveats.map((c) => c.text).join('; ');
}
