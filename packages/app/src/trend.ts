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
  /** A sweep's point: the runs of the scenario's sweep that measured this value. */
  sweepValue?: string;
}

/**
 * The completed runs of a scenario on a target, oldest first, as a trend. Each point of a sweep
 * measured other settings, so a trend takes a sweep's runs only for the sweep value asked for, and
 * then only those; failed, stopped and aborted runs are left out.
 */
export async function loadTrend(history: History, request: TrendRequest): Promise<Trend> {
  const listed = await history.listRuns({ status: 'completed', search: request.scenario });
  const named = listed.filter((run) => run.name === request.scenario);
  const runs = named.filter((run) => run.sweepValue === request.sweepValue).reverse();
  if (runs.length === 0) throw unknownScenario(request, listed, named);
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
  const trend = buildTrend(request.scenario, target, onTarget, request.metrics);
  return request.sweepValue === undefined ? trend : { ...trend, sweepValue: request.sweepValue };
}

/** No run to draw: says what there is instead, the scenario's sweep values or the names like it. */
function unknownScenario(request: TrendRequest, listed: RunListItem[], named: RunListItem[]): TrendError {
  const at = request.sweepValue === undefined ? '' : ` at sweep value ${request.sweepValue}`;
  const values = [...new Set(named.flatMap((r) => (r.sweepValue === undefined ? [] : [r.sweepValue])))];
  const names = [...new Set(listed.map((r) => r.name))].slice(0, 10);
  const hint =
    values.length > 0
      ? `; its sweep values: ${values.slice(0, 20).join(', ')}`
      : names.length > 0
        ? `; completed scenarios whose name contains it: ${names.join(', ')}`
        : '';
  return new TrendError('unknown-scenario', `no completed run of scenario "${request.scenario}"${at}${hint}`);
}
