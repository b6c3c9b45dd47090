import { defineConfig } from 'vitest/config';
import { longestFirst } from '../../vitest.shared.mjs';

// Two test files at a time (each spawns kbench with its own KBENCH_HOME and ports), the longest first:
// `reproduce --all --quick` alone takes about 6 minutes, and the other files run beside it on the
// second worker instead of after it. This keeps `npm test` (and .ci/run) within its time budget.
export default defineConfig({
  test: {
    testTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { sequencer: longestFirst(['reproduce-all', 'agents', 'gate', 'run-slot', 'reproduce']) },
  },
});
