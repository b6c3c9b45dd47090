import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Real kbench-broker processes on loopback ports: one file at a time.
  test: { include: ['test/**/*.test.ts'], testTimeout: 60_000, fileParallelism: false },
});
