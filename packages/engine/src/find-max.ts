// The find-max search: the highest fixed rate whose trial keeps publish p99 and consumer backlog
// within bounds. A closed-loop probe sets the ceiling, then bisection between the highest passing
// and the lowest failing rate until they are within `precision` of each other, so it converges
// in log2(1 / precision) trials or so, whatever the broker does.
import type { FindMaxResult, FindMaxTrial, Scenario } from '@kbench/schema';

export interface TrialOutcome {
  achievedPerSec: number;
  publishP99Ms: number | null;
  backlogGrowth: number;
  errors: number;
}

export type RunTrial = (ratePerSec: number | null) => Promise<TrialOutcome>;

/** A trial at `rate` passes when it kept up, stayed under the p99 bound, and consumers kept up. */
export function judge(rate: number | null, outcome: TrialOutcome, bounds: Scenario['findMax']): FindMaxTrial {
  const reasons: string[] = [];
  if (outcome.errors > 0) reasons.push(`${outcome.errors} errors`);
  if (rate !== null && outcome.achievedPerSec < rate * 0.95) {
    reasons.push(`achieved ${Math.round(outcome.achievedPerSec)} rec/s`);
  }
  if (outcome.publishP99Ms === null || outcome.publishP99Ms > bounds.publishP99Ms) {
    reasons.push(`publish p99 ${outcome.publishP99Ms ?? '-'} ms > ${bounds.publishP99Ms} ms`);
  }
  const allowedBacklog = (rate ?? outcome.achievedPerSec) * bounds.maxBacklogSeconds;
  if (outcome.backlogGrowth > allowedBacklog)
    reasons.push(`backlog grew by ${Math.round(outcome.backlogGrowth)} records`);
  return { rate, ...outcome, pass: reasons.length === 0, reason: reasons.length ? reasons.join('; ') : 'ok' };
}

export async function findMaxRate(
  runTrial: RunTrial,
  bounds: Scenario['findMax'],
  onTrial: (trial: FindMaxTrial) => void = () => {},
  shouldStop: () => boolean = () => false,
  /** A rate ceiling (records/s): the probe runs at it, as a fixed rate, instead of a closed loop. */
  ceiling?: number,
): Promise<FindMaxResult> {
  const trials: FindMaxTrial[] = [];
  const attempt = async (rate: number | null) => {
    const trial = judge(rate, await runTrial(rate), bounds);
    trials.push(trial);
    onTrial(trial);
    return trial;
  };
  const probe = await attempt(ceiling ?? null);
  if (probe.achievedPerSec <= 0) return { rate: null, trials };
  // Nothing above the ceiling may be tried: if the ceiling itself passes, it is the answer.
  if (ceiling !== undefined && probe.pass) return { rate: ceiling, trials };
  // No open-loop rate above what the closed loop reached can keep up.
  let failing = ceiling !== undefined ? Math.min(ceiling, probe.achievedPerSec) : probe.achievedPerSec;
  let passing = 0;
  let rate = Math.floor(failing * 0.9);
  while (trials.length < bounds.maxTrials && !shouldStop() && rate >= 1) {
    const trial = await attempt(rate);
    if (trial.pass) passing = rate;
    else failing = rate;
    if (passing > 0 && (failing - passing) / failing <= bounds.precision) break;
    rate = Math.floor(passing > 0 ? (passing + failing) / 2 : failing / 2);
    if (rate === passing || rate === failing) break;
  }
  return { rate: passing > 0 ? passing : null, trials };
}
