import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real JVMs and brokers; the first run also fetches the Kafka jars with Maven (a minute or more).
    testTimeout: 300_000,
    hookTimeout: 600_000,
    // One machine's ports and CPU: one file at a time.
    fileParallelism: false,
  },
});
