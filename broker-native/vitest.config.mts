import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Brokers and clients are real; rebalances and long polls take seconds.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // The tests share one machine's ports and CPU; run files one at a time.
    fileParallelism: false,
  },
});
