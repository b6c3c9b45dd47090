// The CLI's side of the run slot (one run at a time on a machine, see @kbench/history's run-slot.ts).
import { withRunSlot as withSlot } from '@kbench/app';
import { RunSlot, RunSlotBusyError, type SlotHold } from '@kbench/history';
import { UsageError } from './usage.js';

/** What the refusal suggests, after naming the run that holds the slot. */
export const OVERRIDE_HINT = 'wait for it, stop it, or pass --concurrent to run anyway';

/**
 * Holds the run slot of KBENCH_HOME while `work` runs (a run, a sweep, a whole reproduction). A busy
 * slot is a refusal, exit 2, naming the run that holds it; with `concurrent` the work runs anyway,
 * beside it, and the runs record each other. The hold says it stops on SIGINT, so the workbench's
 * Stop can stop these runs as Ctrl-C does.
 */
export async function withRunSlot<T>(
  claim: { command: string; name: string },
  concurrent: boolean,
  work: (slot: SlotHold) => Promise<T>,
): Promise<T> {
  try {
    return await withSlot(new RunSlot(), { ...claim, stopsOnSigint: true }, concurrent, work);
  } catch (err) {
    if (err instanceof RunSlotBusyError) throw new UsageError(`${err.message}; ${OVERRIDE_HINT}`);
    throw err;
  }
}
