import { defineConfig } from 'vitest/config';
import { longestFirst } from '../../vitest.shared.mjs';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real JVMs and brokers; the first run also fetches the Kafka jars with Maven (a minute or more),
    // once, under a lock that the two workers share.
    testTimeout: 300_000,
    hookTimeout: 600_000,
    // Two files at a time, the 3-node cluster's first: each file starts its own brokers on ports the
    // system picks, and most of a file's time is JVMs starting and waiting on one another.
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { sequencer: longestFirst(['cluster', 'apache-kafka']) },
  },
});
