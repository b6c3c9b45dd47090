// The trend of a scenario on a target, from the history: `kbench trend` and GET /api/trends.
import type { History } from '@kbench/history';
import { buildTrend, type RunListItem, type Trend, type TrendMetric } from '@kbench/schema';

/** Why a trend cannot be drawn: no such scenario, or no (single) target to draw it on. */
export class TrendError extends Error {
  override name = 'TrendError';
  constructor(
    /** unknown-scenario: no completed run of it; unknown-target: none on that target; target-needed: several. */
    readonly kind: 'unknown-scenario' | 'unknown-target' | 'target-needed',
    message: string,
  ) {
    super(message);
  }
}

export interface TrendRequest {
  /** The scenario's name, as its runs store it. */
  scenario: string;
  /** bundled, kafka, a profile's name or bootstrap servers, as the runs store it; optional when it ran on one. */
  target?: string;
  metrics?: readonly TrendMetric[];
}

/**
 * The completed runs of a scenario on a target, oldest first, as a trend. A sweep's runs (each with
 * its sweep value) measure other settings, so they are left out; failed, stopped and aborted runs too.
 */
export async function loadTrend(history: History, request: TrendRequest): Promise<Trend> {
  const listed = await history.listRuns({ status: 'completed', search: request.scenario });
  const runs = listed
    .filter((run) => run.name === request.scenario && run.sweepValue === undefined)
    .reverse();
  if (runs.length === 0) {
    const names = [...new Set(listed.filter((r) => r.sweepValue === undefined).map((r) => r.name))].slice(
      0,
      10,
    );
    const near = names.length > 0 ? `; completed scenarios whose name contains it: ${names.join(', ')}` : '';
    throw new TrendError('unknown-scenario', `no completed run of scenario "${request.scenario}"${near}`);
  }
  const targets = [...new Set(runs.map((run) => run.target))].sort();
  const target = request.target ?? (targets.length === 1 ? targets[0] : undefined);
  if (target === undefined) {
    throw new TrendError(
      'target-needed',
      `scenario "${request.scenario}" ran on ${targets.length} targets; name one with target: ${targets.join(', ')}`,
    );
  }
  const onTarget: RunListItem[] = runs.filter((run) => run.target === target);
  if (onTarget.length === 0) {
    throw new TrendError(
      'unknown-target',
      `scenario "${request.scenario}" has no completed run on target "${target}"; its targets: ${targets.join(', ')}`,
    );
  }
  return buildTrend(request.scenario, target, onTarget, request.metrics);
}
