import { defineConfig } from 'vitest/config';

// One file at a time: the real-run and reproduction tests start real runs, which must not share the
// machine with each other (a run's figures and timing depend on it).
export default defineConfig({
  test: { fileParallelism: false },
});
