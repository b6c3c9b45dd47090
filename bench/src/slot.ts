// `npm run bench` holds the machine's run slot (KBENCH_HOME/run.lock), as `kbench run` does: a
// benchmark sharing the machine with a run would measure neither, and neither would say so.
import { RunSlot, RunSlotBusyError } from '@kbench/history';

/** Takes the run slot for a benchmark, or exits 2 naming the run that holds it. Held until exit. */
export function holdBenchSlot(name: string): void {
  try {
    new RunSlot().take({ command: 'npm run bench', name, stopsOnSigint: false });
  } catch (err) {
    if (!(err instanceof RunSlotBusyError)) throw err;
    process.stderr.write(`${name}: ${err.message}; wait for it or stop it, then run the benchmark again\n`);
    process.exit(2);
  }
}
