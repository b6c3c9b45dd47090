// A series: runs one after another while one process holds the run slot (a sweep's points, one
// scenario on several targets, a reproduction's experiments). `kbench run|sweep|rerun|reproduce`
// and the workbench's runs, sweeps and reproductions all run here.
import { randomBytes } from 'node:crypto';
import type { LiveRun } from '@kbench/engine';
import type { ProfileStore } from '@kbench/engine/profiles';
import type { History, RunSlot, SlotClaim, SlotHold } from '@kbench/history';
import {
  type AgentEndpoint,
  expandSweep,
  type RunRecord,
  type RunStatus,
  type Scenario,
  sweepLabels,
} from '@kbench/schema';

/** One run of a series: its resolved scenario, the file it came from, and the tags its stored run gets. */
export interface SeriesItem {
  scenario: Scenario;
  source: string | null;
  tags?: string[];
  /** The sweep value the run measures, as the scenario writes it; stored as the run's field. */
  sweepValue?: string;
  /** The series the run belongs to; stored as the run's field. */
  series?: string;
}

/** A new series id, `<kind>:<time>:<random>` (a reproduction's series is its tag instead). */
export function newSeriesId(kind: 'sweep' | 'targets' | 'repeat'): string {
  return `${kind}:${new Date().toISOString()}:${randomBytes(3).toString('hex')}`;
}

/** A scenario's runs: one per sweep value, each with its value and the sweep's series, or the scenario alone. */
export function sweepSeries(scenario: Scenario, source: string | null): SeriesItem[] {
  if (!scenario.sweep) return [{ scenario, source }];
  const series = newSeriesId('sweep');
  const values = sweepLabels(scenario);
  return expandSweep(scenario).map((plan, i) => {
    const sweepValue = values[i];
    return { scenario: plan, source, series, ...(sweepValue === undefined ? {} : { sweepValue }) };
  });
}

/**
 * Each item `repeat` times, interleaved (A B A B ..., a sweep's points likewise) so that a drift of the
 * machine over the series hits every configuration alike; all in one series (the items' own, or a new
 * `repeat:` one). One repeat returns the items as they are.
 */
export function repeatSeries(items: SeriesItem[], repeat: number): SeriesItem[] {
  if (repeat <= 1) return items;
  const series = items[0]?.series ?? newSeriesId('repeat');
  const out: SeriesItem[] = [];
  for (let round = 0; round < repeat; round++) for (const item of items) out.push({ ...item, series });
  return out;
}

export interface SeriesOptions {
  history: History;
  /** The run slot, held by the caller for the whole series; each run is named in it as it starts. */
  hold: SlotHold;
  /** End at the first run that does not complete (a sweep: the points after it would measure a broken setup). */
  endOnFailure?: boolean;
  profiles?: ProfileStore;
  /** A rate ceiling in records/s (`--max-rate`). */
  maxRate?: number;
  /** Load agents the clients run on (`--agents`), and their token when the profile has none. */
  agents?: AgentEndpoint[];
  agentToken?: string;
  /** Asked before each run: true ends the series there (Ctrl-C in the CLI, a closing server). */
  interrupted?: () => boolean;
  /** Before a run starts. */
  beforeRun?: (item: SeriesItem, index: number) => void;
  /** A run has started and its tags are stored; `others` are the runs going beside it. */
  onStart?: (run: LiveRun, index: number, others: string[]) => void;
  /** A run has ended, stored, and the slot no longer names it. */
  onEnd?: (record: RunRecord, index: number) => void;
}

export interface SeriesOutcome {
  records: RunRecord[];
  /** The run that ended the series before its last (stopped, or failed with endOnFailure), if one did. */
  endedAt: { index: number; status: RunStatus } | null;
  /** The index of the run `interrupted` kept from starting, if it did. */
  interruptedAt: number | null;
}

/**
 * Runs the items in order in the slot the caller holds, each stored in the history with its tags.
 * The series ends at a stopped run (someone pressed Stop or Ctrl-C), with `endOnFailure` at a failed
 * one too, and before a run when `interrupted` says so. A run that cannot start rejects with its error.
 */
export async function runSeries(items: SeriesItem[], opts: SeriesOptions): Promise<SeriesOutcome> {
  // Loaded on first use: the engine brings the native broker, which browsing the history does not need.
  const { newRunId, startRecordedRun } = await import('@kbench/engine');
  const { history, hold } = opts;
  const records: RunRecord[] = [];
  for (const [index, item] of items.entries()) {
    if (opts.interrupted?.()) return { records, endedAt: null, interruptedAt: index };
    opts.beforeRun?.(item, index);
    const id = newRunId();
    const others = hold.startRun(id, item.scenario.name);
    let run: LiveRun;
    try {
      run = await startRecordedRun(item.scenario, {
        history,
        source: item.source,
        id,
        concurrentWith: others,
        ...(opts.profiles ? { profiles: opts.profiles } : {}),
        ...(opts.maxRate === undefined ? {} : { maxRate: opts.maxRate }),
        ...(opts.agents ? { agents: opts.agents } : {}),
        ...(opts.agentToken === undefined ? {} : { agentToken: opts.agentToken }),
        ...(item.sweepValue === undefined ? {} : { sweepValue: item.sweepValue }),
        ...(item.series === undefined ? {} : { series: item.series }),
      });
    } catch (err) {
      hold.endRun();
      throw err;
    }
    // The engine stores a run untagged; the tags follow at once, before anyone is told its id.
    if (item.tags && item.tags.length > 0) await history.setTags(run.id, item.tags);
    opts.onStart?.(run, index, others);
    const record = await run.done;
    hold.endRun();
    records.push(record);
    opts.onEnd?.(record, index);
    const more = index + 1 < items.length;
    if (more && (record.status === 'stopped' || (opts.endOnFailure && record.status !== 'completed')))
      return { records, endedAt: { index, status: record.status }, interruptedAt: null };
  }
  return { records, endedAt: null, interruptedAt: null };
}

/**
 * Holds the run slot while `work` runs (a run, a series, a whole reproduction), and gives it back
 * after. A busy slot throws RunSlotBusyError naming the holder; with `concurrent` the work runs
 * beside it, and the runs record each other. Taken synchronously, so two quick calls cannot both get it.
 */
export async function withRunSlot<T>(
  slot: RunSlot,
  claim: SlotClaim,
  concurrent: boolean,
  work: (hold: SlotHold) => Promise<T>,
): Promise<T> {
  const hold = slot.take(claim, { concurrent });
  try {
    return await work(hold);
  } finally {
    hold.release();
  }
}
