import { defineConfig } from 'vitest/config';

// One file at a time: the real-run and reproduction tests start real runs, which must not share the
// machine with each other (a run's figures and timing depend on it). A real run takes seconds, more
// on a busy machine: the time limit is a hang guard, not a speed check.
export default defineConfig({
  test: { fileParallelism: false, testTimeout: 120_000, hookTimeout: 60_000 },
});
